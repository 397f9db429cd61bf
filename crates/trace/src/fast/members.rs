//! The members of an object, with the text between them matched whole against the text last seen
//! in the same place.
//!
//! Kineto writes every event of a kind with the same keys, in the same order and with the same
//! whitespace, so the text from the end of one value to the start of the next (`,` spaces
//! `"key"` `:` space) repeats event after event. Read the slow way once, token by token by JSON's
//! grammar, such a separator is recorded; when the same place comes again, the recorded bytes are
//! compared with the text in one go. Equal bytes read the same way by the grammar, so nothing but
//! the time changes: the key, the value's first position and everything checked in between are
//! those of the recorded reading. Which separator may come next is learnt as a chain: after each
//! separator, the few that followed it last.

use super::cursor::{Cursor, Tok};
use super::lexeme::Bad;

/// What kind of object the members belong to: it decides which keys are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Object {
    /// An element of the events array.
    Event,
    /// An event's `args`.
    Args,
}

/// Which field a member fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    Ph,
    Cat,
    Name,
    Pid,
    Tid,
    Ts,
    Dur,
    Args,
    Device,
    Stream,
    Correlation,
    /// A key the analysis does not read: the value is checked and skipped.
    Other,
}

impl Slot {
    /// The slot of a decoded key in an object of kind `object`.
    pub(crate) fn of(object: Object, key: &[u8]) -> Slot {
        match (object, key) {
            (Object::Event, b"ph") => Slot::Ph,
            (Object::Event, b"cat") => Slot::Cat,
            (Object::Event, b"name") => Slot::Name,
            (Object::Event, b"pid") => Slot::Pid,
            (Object::Event, b"tid") => Slot::Tid,
            (Object::Event, b"ts") => Slot::Ts,
            (Object::Event, b"dur") => Slot::Dur,
            (Object::Event, b"args") => Slot::Args,
            (Object::Args, b"device") => Slot::Device,
            (Object::Args, b"stream") => Slot::Stream,
            (Object::Args, b"correlation") => Slot::Correlation,
            _ => Slot::Other,
        }
    }
}

/// The next part of an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Member {
    /// A member: its slot, and its value's first position and byte.
    Value(Slot, Tok),
    /// The object's `}` is at this position.
    Close(usize),
}

/// Where the reading of an object stands, for predicting what comes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Place(u32);

impl Place {
    /// Just after the `{` of an object of kind `object`.
    pub(crate) fn start(object: Object) -> Place {
        Place(object as u32)
    }

    /// After a member whose separator was not recorded: nothing to predict from.
    const UNKNOWN: Place = Place(u32::MAX);

    fn is_start(self) -> bool {
        self.0 < 2
    }
}

/// Longest separator recorded, in bytes: at most three 16-byte comparisons (Kineto's longest,
/// `,      "est. achieved occupancy %": `, has 36).
const LONGEST: usize = 48;
/// Separators recorded per reader; past that, new ones are read the slow way every time (a
/// document with ever-changing keys is read as fast as before, not slower).
const MOST: usize = 256;
/// Separators remembered as possible successors of one place.
const FOLLOWERS: usize = 4;
/// No separator.
const NONE: u32 = u32::MAX;

/// A recorded separator.
#[derive(Debug, Clone)]
struct Separator {
    /// Its bytes, zero-padded.
    bytes: [u128; 3],
    /// Which bytes count.
    mask: [u128; 3],
    len: usize,
    object: Object,
    slot: Slot,
    /// It ends with the object's `}` instead of a value's start.
    close: bool,
}

impl Separator {
    #[inline(always)]
    fn matches(&self, buf: &[u8], at: usize) -> bool {
        let Some(text) = buf.get(at..at + LONGEST) else {
            return false;
        };
        let differs = |i: usize| {
            let word = u128::from_le_bytes(text[16 * i..16 * i + 16].try_into().expect("16 bytes"));
            (word ^ self.bytes[i]) & self.mask[i]
        };
        // Words past the separator's length are masked out whole: most separators (`, "ts": `)
        // fit one word, so only the words that count are loaded.
        match self.len {
            0..=16 => differs(0) == 0,
            17..=32 => differs(0) | differs(1) == 0,
            _ => differs(0) | differs(1) | differs(2) == 0,
        }
    }
}

/// The separators one reader has recorded, and which may follow which.
#[derive(Debug, Default)]
pub(crate) struct Separators {
    list: Vec<Separator>,
    /// Indexed by place: the two starts, then each separator's index plus two.
    followers: Vec<[u32; FOLLOWERS]>,
}

impl Separators {
    fn followers(&self, place: Place) -> Option<&[u32; FOLLOWERS]> {
        self.followers.get(place.0 as usize)
    }

    /// Records the separator `text` read after `place`, and moves `place` to it.
    fn record(&mut self, place: &mut Place, text: &[u8], object: Object, slot: Slot, close: bool) {
        if text.len() > LONGEST || !text.is_ascii() {
            *place = Place::UNKNOWN;
            return;
        }
        let mut padded = [0u8; LONGEST];
        padded[..text.len()].copy_from_slice(text);
        let mut ones = [0u8; LONGEST];
        ones[..text.len()].fill(0xff);
        let word = |b: &[u8; LONGEST], i: usize| {
            u128::from_le_bytes(b[16 * i..16 * i + 16].try_into().expect("16 bytes"))
        };
        let sep = Separator {
            bytes: [word(&padded, 0), word(&padded, 1), word(&padded, 2)],
            mask: [word(&ones, 0), word(&ones, 1), word(&ones, 2)],
            len: text.len(),
            object,
            slot,
            close,
        };
        if self.followers.is_empty() {
            self.followers = vec![[NONE; FOLLOWERS]; 2];
        }
        // The same separator reached from elsewhere is the same place: chains join.
        let same = |s: &Separator| {
            s.len == sep.len
                && s.bytes == sep.bytes
                && s.object == object
                && s.slot == slot
                && s.close == close
        };
        let id = match self.list.iter().position(same) {
            Some(i) => i as u32 + 2,
            None if self.list.len() < MOST => {
                self.list.push(sep);
                self.followers.push([NONE; FOLLOWERS]);
                self.list.len() as u32 + 1
            }
            None => {
                *place = Place::UNKNOWN;
                return;
            }
        };
        if let Some(next) = self.followers.get_mut(place.0 as usize) {
            // Newest first; the oldest falls off.
            if !next.contains(&id) {
                next.rotate_right(1);
                next[0] = id;
            }
        }
        *place = Place(id);
    }
}

impl Cursor<'_> {
    /// The next member of an object of kind `object`, or its end; `place` is where the reading
    /// stands (`Place::start` just after `{`) and moves past what was read.
    #[inline(always)]
    pub(crate) fn member(&mut self, object: Object, place: &mut Place) -> Result<Member, Bad> {
        if let Some(next) = self.separators.followers(*place) {
            for &id in next {
                if id == NONE {
                    break;
                }
                let sep = &self.separators.list[id as usize - 2];
                if sep.matches(self.buf, self.at) {
                    let (len, slot, close) = (sep.len, sep.slot, sep.close);
                    self.at += len;
                    *place = Place(id);
                    if close {
                        return Ok(Member::Close(self.at - 1));
                    }
                    // The separator ends at the value's first byte, which is read as usual.
                    return Ok(Member::Value(slot, self.tok()?));
                }
            }
        }
        self.member_slowly(object, place)
    }

    /// [`Cursor::member`] token by token, recording the separator read.
    #[inline(never)]
    fn member_slowly(&mut self, object: Object, place: &mut Place) -> Result<Member, Bad> {
        let from = self.at;
        let (q, c) = if place.is_start() {
            self.tok()?
        } else {
            match self.tok()? {
                (_, b',') => self.tok()?,
                (p, b'}') => {
                    self.separators.record(place, &self.buf[from..=p], object, Slot::Other, true);
                    return Ok(Member::Close(p));
                }
                _ => return Err(Bad::Syntax),
            }
        };
        if c == b'}' && place.is_start() {
            self.separators.record(place, &self.buf[from..=q], object, Slot::Other, true);
            return Ok(Member::Close(q));
        }
        if c != b'"' {
            return Err(Bad::Syntax);
        }
        let key = self.key_text(q)?;
        self.expect(b':')?;
        let v = self.tok()?;
        let slot = Slot::of(object, &key);
        self.separators.record(place, &self.buf[from..v.0], object, slot, false);
        Ok(Member::Value(slot, v))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads the members of the object that starts at `buf[0] == '{'`, in order.
    fn members(cur: &mut Cursor, object: Object) -> Vec<Member> {
        let mut out = Vec::new();
        let (_, c) = cur.tok().unwrap();
        assert_eq!(c, b'{');
        let mut place = Place::start(object);
        loop {
            let m = cur.member(object, &mut place).unwrap();
            out.push(m);
            match m {
                Member::Close(_) => return out,
                Member::Value(_, v) => {
                    cur.skip(v, 3, super::super::cursor::Strings::Decoded).unwrap();
                }
            }
        }
    }

    #[test]
    fn recorded_separators_read_as_the_grammar_does() {
        let one = r#"{
    "ph": "X", "cat": "kernel", "ts": 5.5, "args": {"device": 0}, "other": [1, 2]
  }"#;
        // The same object three times, then a variant: different spacing, a new key, an escape.
        let variant = r#"{
    "ph":"f", "cat": "kernel", "t\u0073": 1, "args": {"device": 0},  "other": [1, 2], "x": 1
  }"#;
        let text = format!("{one}{one}{one}{variant}{one}{}", " ".repeat(40));
        let mut cur = Cursor::new(text.as_bytes(), 0);
        let first = members(&mut cur, Object::Event);
        let offset = one.len();
        for k in 1..3 {
            let again = members(&mut cur, Object::Event);
            let shifted: Vec<Member> = first
                .iter()
                .map(|m| match *m {
                    Member::Value(s, (p, c)) => Member::Value(s, (p + k * offset, c)),
                    Member::Close(p) => Member::Close(p + k * offset),
                })
                .collect();
            assert_eq!(again, shifted, "copy {k}");
        }
        let slots: Vec<Slot> = members(&mut cur, Object::Event)
            .iter()
            .filter_map(|m| match m {
                Member::Value(s, _) => Some(*s),
                Member::Close(_) => None,
            })
            .collect();
        assert_eq!(slots, [Slot::Ph, Slot::Cat, Slot::Ts, Slot::Args, Slot::Other, Slot::Other]);
        let last = members(&mut cur, Object::Event);
        assert_eq!(last.len(), first.len());
        assert!(cur.separators.list.len() < 20, "separators are shared, not recorded again");
    }

    #[test]
    fn keys_keep_their_meaning_in_their_object() {
        assert_eq!(Slot::of(Object::Event, b"device"), Slot::Other);
        assert_eq!(Slot::of(Object::Args, b"device"), Slot::Device);
        assert_eq!(Slot::of(Object::Args, b"ph"), Slot::Other);
        assert_eq!(Slot::of(Object::Args, b"correlation"), Slot::Correlation);
    }
}
