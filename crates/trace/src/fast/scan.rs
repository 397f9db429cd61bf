//! Stage one of the fast parser: classifies 64 bytes at a time into bit masks and yields, in order,
//! only the positions the grammar has to look at (the simdjson design, without a tape).
//!
//! A position is yielded when it holds, outside strings, one of `{ } [ ] : ,`, the first byte of a
//! scalar (number or literal; any other byte outside strings is also a "scalar" and fails later), or
//! an unescaped `"`; inside strings, the backslash that starts an escape and any control character
//! (which JSON forbids there). Runs of whitespace, string contents and the rest of scalars are never
//! visited one byte at a time. Bytes ≥ 0x80 are not yielded: the block that holds one is remembered
//! so that the element around it can be checked as UTF-8 (traces are ASCII in practice).

/// Bytes per block.
pub(crate) const BLOCK: usize = 64;

/// One bit per byte of a block, for each class of byte.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Classes {
    /// `"`.
    pub quote: u64,
    /// `\`.
    pub backslash: u64,
    /// `{ } [ ] : ,`.
    pub op: u64,
    /// JSON whitespace: space, tab, line feed, carriage return.
    pub ws: u64,
    /// Bytes below 0x20.
    pub ctrl: u64,
    /// Bytes ≥ 0x80.
    pub high: u64,
}

/// Classifies one block, byte by byte: the reference the vector versions are tested against, and
/// the path on targets without one.
#[cfg_attr(target_arch = "x86_64", allow(dead_code))]
pub(crate) fn classify_portable(block: &[u8; BLOCK]) -> Classes {
    let mut c = Classes::default();
    for (i, &b) in block.iter().enumerate() {
        let bit = 1u64 << i;
        match b {
            b'"' => c.quote |= bit,
            b'\\' => c.backslash |= bit,
            b'{' | b'}' | b'[' | b']' | b':' | b',' => c.op |= bit,
            b' ' | b'\t' | b'\n' | b'\r' => c.ws |= bit,
            _ => {}
        }
        if b < 0x20 {
            c.ctrl |= bit;
        }
        if b >= 0x80 {
            c.high |= bit;
        }
    }
    c
}

/// Classifies one block with SSE2, which every x86-64 processor has.
#[cfg(target_arch = "x86_64")]
pub(crate) fn classify_sse2(block: &[u8; BLOCK]) -> Classes {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86-64 baseline, and every load reads 16 bytes inside `block`.
    unsafe {
        let quote = _mm_set1_epi8(b'"' as i8);
        let backslash = _mm_set1_epi8(b'\\' as i8);
        let open = _mm_set1_epi8(b'{' as i8);
        let close = _mm_set1_epi8(b'}' as i8);
        let colon = _mm_set1_epi8(b':' as i8);
        let comma = _mm_set1_epi8(b',' as i8);
        let case = _mm_set1_epi8(0x20);
        let space = _mm_set1_epi8(b' ' as i8);
        let lf = _mm_set1_epi8(b'\n' as i8);
        let cr = _mm_set1_epi8(b'\r' as i8);
        let tab = _mm_set1_epi8(b'\t' as i8);
        let below = _mm_set1_epi8(0x1f);
        let mut c = Classes::default();
        for k in 0..4 {
            let x = _mm_loadu_si128(block.as_ptr().add(16 * k) as *const __m128i);
            // `[` and `]` differ from `{` and `}` only in bit 0x20.
            let folded = _mm_or_si128(x, case);
            let op = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(folded, open), _mm_cmpeq_epi8(folded, close)),
                _mm_or_si128(_mm_cmpeq_epi8(x, colon), _mm_cmpeq_epi8(x, comma)),
            );
            let ws = _mm_or_si128(
                _mm_or_si128(_mm_cmpeq_epi8(x, space), _mm_cmpeq_epi8(x, lf)),
                _mm_or_si128(_mm_cmpeq_epi8(x, cr), _mm_cmpeq_epi8(x, tab)),
            );
            // x ≤ 0x1f exactly when max(x, 0x1f) == 0x1f (unsigned).
            let ctrl = _mm_cmpeq_epi8(_mm_max_epu8(x, below), below);
            let shift = 16 * k;
            let bits = |v: __m128i| (_mm_movemask_epi8(v) as u16 as u64) << shift;
            c.quote |= bits(_mm_cmpeq_epi8(x, quote));
            c.backslash |= bits(_mm_cmpeq_epi8(x, backslash));
            c.op |= bits(op);
            c.ws |= bits(ws);
            c.ctrl |= bits(ctrl);
            c.high |= bits(x);
        }
        c
    }
}

/// One block's positions with AVX2: classification and bit logic in one function, so that the
/// masks stay in registers.
///
/// # Safety
/// The processor must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn block_avx2(block: &[u8; BLOCK], carry: &mut Carry) -> (u64, bool) {
    use std::arch::x86_64::*;
    let quote = _mm256_set1_epi8(b'"' as i8);
    let backslash = _mm256_set1_epi8(b'\\' as i8);
    let open = _mm256_set1_epi8(b'{' as i8);
    let close = _mm256_set1_epi8(b'}' as i8);
    let colon = _mm256_set1_epi8(b':' as i8);
    let comma = _mm256_set1_epi8(b',' as i8);
    let case = _mm256_set1_epi8(0x20);
    let space = _mm256_set1_epi8(b' ' as i8);
    let lf = _mm256_set1_epi8(b'\n' as i8);
    let cr = _mm256_set1_epi8(b'\r' as i8);
    let tab = _mm256_set1_epi8(b'\t' as i8);
    let below = _mm256_set1_epi8(0x1f);
    let mut c = Classes::default();
    for k in 0..2 {
        // SAFETY: reads 32 bytes inside `block`.
        let x = _mm256_loadu_si256(block.as_ptr().add(32 * k) as *const __m256i);
        let folded = _mm256_or_si256(x, case);
        let op = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi8(folded, open), _mm256_cmpeq_epi8(folded, close)),
            _mm256_or_si256(_mm256_cmpeq_epi8(x, colon), _mm256_cmpeq_epi8(x, comma)),
        );
        let ws = _mm256_or_si256(
            _mm256_or_si256(_mm256_cmpeq_epi8(x, space), _mm256_cmpeq_epi8(x, lf)),
            _mm256_or_si256(_mm256_cmpeq_epi8(x, cr), _mm256_cmpeq_epi8(x, tab)),
        );
        let ctrl = _mm256_cmpeq_epi8(_mm256_max_epu8(x, below), below);
        let shift = 32 * k;
        // A macro, not a closure: closures do not inherit `target_feature`, and the intrinsic
        // would become a call.
        macro_rules! bits {
            ($v:expr) => {
                (_mm256_movemask_epi8($v) as u32 as u64) << shift
            };
        }
        c.quote |= bits!(_mm256_cmpeq_epi8(x, quote));
        c.backslash |= bits!(_mm256_cmpeq_epi8(x, backslash));
        c.op |= bits!(op);
        c.ws |= bits!(ws);
        c.ctrl |= bits!(ctrl);
        c.high |= bits!(x);
    }
    (positions(&c, carry), c.high != 0)
}

/// What carries from one block to the next.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Carry {
    /// All ones when the previous block ended inside a string.
    in_string: u64,
    /// Whether the first byte of the next block is escaped.
    escape: u64,
    /// Whether the previous block ended on a scalar byte.
    scalar: u64,
}

/// Finds one block's positions: the bits to yield, and whether it holds a byte ≥ 0x80.
pub(crate) type BlockFn = fn(&[u8; BLOCK], &mut Carry) -> (u64, bool);

/// [`BlockFn`] over any classifier.
#[inline(always)]
fn block_with(classify: fn(&[u8; BLOCK]) -> Classes, block: &[u8; BLOCK], carry: &mut Carry) -> (u64, bool) {
    let c = classify(block);
    (positions(&c, carry), c.high != 0)
}

/// The best block function this processor runs.
pub(crate) fn block_fn() -> BlockFn {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: chosen only where the processor has AVX2.
            return |block, carry| unsafe { block_avx2(block, carry) };
        }
        |block, carry| block_with(classify_sse2, block, carry)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        |block, carry| block_with(classify_portable, block, carry)
    }
}

/// The positions to yield in a block with classes `c`.
#[inline(always)]
fn positions(c: &Classes, carry: &mut Carry) -> u64 {
    let escaped = escaped(c.backslash, &mut carry.escape);
    let quote = c.quote & !escaped;
    // Inside a string, counting the opening quote and not the closing one.
    let inside = prefix_xor(quote) ^ carry.in_string;
    carry.in_string = ((inside as i64) >> 63) as u64;
    let string = inside | quote;
    let scalar = !(c.ws | c.op) & !string;
    let scalar_start = scalar & !((scalar << 1) | carry.scalar);
    carry.scalar = scalar >> 63;
    let escape_start = c.backslash & !escaped & inside;
    (c.op & !string) | quote | scalar_start | escape_start | (c.ctrl & inside & !escaped)
}

/// XOR of every bit with all the bits below it: turns quote positions into "inside a string".
#[inline]
fn prefix_xor(mut x: u64) -> u64 {
    x ^= x << 1;
    x ^= x << 2;
    x ^= x << 4;
    x ^= x << 8;
    x ^= x << 16;
    x ^= x << 32;
    x
}

/// The bytes that a backslash escapes, given the backslashes of a block; `carry` says whether the
/// first byte is escaped by the previous block and is updated for the next one.
#[inline]
pub(crate) fn escaped(backslash: u64, carry: &mut u64) -> u64 {
    if backslash == 0 && *carry == 0 {
        return 0;
    }
    const EVEN: u64 = 0x5555_5555_5555_5555;
    // A backslash that is itself escaped starts nothing.
    let backslash = backslash & !*carry;
    let follows = (backslash << 1) | *carry;
    // Runs of backslashes that start on an odd bit: adding the run's start carries through the run,
    // so the bit after an odd-length run lands on the parity that marks it escaped.
    let odd_starts = backslash & !EVEN & !follows;
    let (even_runs, overflow) = odd_starts.overflowing_add(backslash);
    *carry = overflow as u64;
    let invert = even_runs << 1;
    (EVEN ^ invert) & follows
}

/// The positions stage two visits, in order, over `buf[start..]`, beginning outside any string.
pub(crate) struct Tokens<'a> {
    buf: &'a [u8],
    block: BlockFn,
    /// Offset of the current block in `buf`.
    base: usize,
    /// Positions of the current block not yet yielded.
    bits: u64,
    carry: Carry,
    /// End of the last block that held a byte ≥ 0x80 (0 if none).
    high_end: usize,
}

impl<'a> Tokens<'a> {
    /// Starts at `start`, which must lie outside any string.
    pub(crate) fn new(buf: &'a [u8], start: usize) -> Self {
        let mut t =
            Tokens { buf, block: block_fn(), base: start, bits: 0, carry: Carry::default(), high_end: 0 };
        t.load();
        t
    }

    /// The next position, or `None` at the end of the buffer.
    #[inline(always)]
    pub(crate) fn next(&mut self) -> Option<usize> {
        while self.bits == 0 {
            self.base += BLOCK;
            if self.base >= self.buf.len() {
                self.base = self.buf.len();
                return None;
            }
            self.load();
        }
        let i = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        Some(self.base + i)
    }

    /// A position at or past every position yielded so far.
    pub(crate) fn reached(&self) -> usize {
        (self.base + BLOCK).min(self.buf.len())
    }

    /// End of the last block that held a byte ≥ 0x80; an element that starts before it needs a
    /// UTF-8 check.
    pub(crate) fn high_end(&self) -> usize {
        self.high_end
    }

    fn load(&mut self) {
        let rest = &self.buf[self.base.min(self.buf.len())..];
        let (bits, high) = if rest.len() >= BLOCK {
            let block: &[u8; BLOCK] = rest[..BLOCK].try_into().expect("a full block");
            (self.block)(block, &mut self.carry)
        } else {
            // The tail: padded with spaces, which yield nothing.
            let mut block = [b' '; BLOCK];
            block[..rest.len()].copy_from_slice(rest);
            (self.block)(&block, &mut self.carry)
        };
        if high {
            self.high_end = self.base + BLOCK;
        }
        self.bits = bits;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The positions, found one byte at a time with an explicit state machine. A backslash
    /// escapes the next byte outside strings too (stage one cannot tell; such text is invalid
    /// anyway, and the backslash itself is yielded as a scalar).
    fn naive(buf: &[u8], start: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let (mut in_string, mut escape, mut prev_scalar) = (false, false, false);
        for (i, &b) in buf.iter().enumerate().skip(start) {
            let escaped = std::mem::take(&mut escape);
            if in_string {
                if escaped {
                    continue;
                }
                match b {
                    b'\\' => {
                        escape = true;
                        out.push(i);
                    }
                    b'"' => {
                        in_string = false;
                        out.push(i);
                    }
                    _ if b < 0x20 => out.push(i),
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' if !escaped => {
                    in_string = true;
                    out.push(i);
                    prev_scalar = false;
                }
                b'{' | b'}' | b'[' | b']' | b':' | b',' => {
                    out.push(i);
                    prev_scalar = false;
                }
                b' ' | b'\t' | b'\n' | b'\r' => prev_scalar = false,
                _ => {
                    escape = b == b'\\' && !escaped;
                    if !prev_scalar {
                        out.push(i);
                    }
                    prev_scalar = true;
                }
            }
        }
        out
    }

    fn fast(buf: &[u8], start: usize) -> Vec<usize> {
        let mut t = Tokens::new(buf, start);
        std::iter::from_fn(|| t.next()).collect()
    }

    #[test]
    fn kineto_event() {
        let text = br#"  {
    "ph": "X", "cat": "kernel", "name": "a\"b\\", "pid": 0, "tid": 7,
    "ts": 5118046481399.733, "dur": 1.600, "args": {"grid": [64, 1, 1], "ok": true}
  },"#;
        assert_eq!(fast(text, 0), naive(text, 0));
        assert_eq!(fast(text, 2), naive(text, 2));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn vector_versions_match_portable_on_every_byte() {
        let mut block = [0u8; BLOCK];
        for base in (0..256).step_by(BLOCK) {
            for (i, b) in block.iter_mut().enumerate() {
                *b = (base + i) as u8;
            }
            assert_eq!(classify_sse2(&block), classify_portable(&block));
            for carry in [Carry::default(), Carry { in_string: !0, escape: 1, scalar: 1 }] {
                let (mut a, mut b) = (carry, carry);
                let want = block_with(classify_portable, &block, &mut a);
                assert_eq!(block_fn()(&block, &mut b), want);
                assert_eq!((a.in_string, a.escape, a.scalar), (b.in_string, b.escape, b.scalar));
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn same_positions_as_the_naive_scan(
            bytes in proptest::collection::vec(proptest::sample::select(
                b"\"\\{}[]:, \n\tab01\x01\xc3".to_vec()), 0..400),
            start in 0usize..8,
        ) {
            let start = start.min(bytes.len());
            proptest::prop_assert_eq!(fast(&bytes, start), naive(&bytes, start));
        }

        #[cfg(target_arch = "x86_64")]
        #[test]
        fn vector_versions_match_portable(bytes in proptest::collection::vec(proptest::num::u8::ANY, BLOCK)) {
            let block: [u8; BLOCK] = bytes.try_into().unwrap();
            proptest::prop_assert_eq!(classify_sse2(&block), classify_portable(&block));
            let (mut a, mut b) = (Carry::default(), Carry::default());
            proptest::prop_assert_eq!(block_fn()(&block, &mut b), block_with(classify_portable, &block, &mut a));
        }
    }
}
