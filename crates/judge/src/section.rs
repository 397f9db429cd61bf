//! How a section of the settings is declared: once, with each key's doc, type, default, flag and
//! rule. `section!` makes from that one declaration the struct the judge reads (and serde reads
//! from TOML), the enum of its keys (what "set by the user" is made of), each key's flag with its
//! help and default for clap (feature `cli`), and the check of each value against its rule.

use std::fmt::Display;

/// What a value must be, checked once the settings are merged.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Rule {
    /// Anything its type holds.
    Any,
    /// A number from 0 to 1.
    Fraction,
    /// A number strictly between 0 and 1.
    OpenUnit,
    /// A finite number, 0 or more.
    NonNegative,
    /// A finite number above this.
    Above(f64),
    /// A whole number of at least this.
    AtLeast(u64),
    /// A whole number in this range, both ends included.
    Within(u64, u64),
}

/// A value a [`Rule`] can judge.
pub trait Ruled {
    /// What is wrong with the value under `rule`, as the end of a sentence ("must be …, got …").
    fn broken(&self, rule: Rule) -> Option<String>;
}

impl Ruled for f64 {
    fn broken(&self, rule: Rule) -> Option<String> {
        let v = *self;
        let ok = match rule {
            Rule::Any => true,
            Rule::Fraction => (0.0..=1.0).contains(&v),
            Rule::OpenUnit => v > 0.0 && v < 1.0,
            Rule::NonNegative => v.is_finite() && v >= 0.0,
            Rule::Above(lo) => v.is_finite() && v > lo,
            Rule::AtLeast(lo) => v >= lo as f64,
            Rule::Within(lo, hi) => (lo as f64..=hi as f64).contains(&v),
        };
        (!ok).then(|| format!("must be {}, got {v}", rule.words()))
    }
}

macro_rules! ruled_integer {
    ($($t:ty),*) => {$(
        impl Ruled for $t {
            fn broken(&self, rule: Rule) -> Option<String> {
                let v = u64::from(*self);
                let ok = match rule {
                    Rule::AtLeast(lo) => v >= lo,
                    Rule::Within(lo, hi) => (lo..=hi).contains(&v),
                    other => return (v as f64).broken(other),
                };
                (!ok).then(|| format!("must be {}, got {v}", rule.words()))
            }
        }
    )*};
}
ruled_integer!(u32, u64);

impl Ruled for bool {
    fn broken(&self, _: Rule) -> Option<String> {
        None
    }
}

impl Ruled for String {
    fn broken(&self, _: Rule) -> Option<String> {
        None
    }
}

impl Rule {
    fn words(self) -> String {
        match self {
            Rule::Any => "anything".into(),
            Rule::Fraction => "between 0 and 1".into(),
            Rule::OpenUnit => "between 0 and 1 (exclusive)".into(),
            Rule::NonNegative => "a non-negative number".into(),
            Rule::Above(lo) => format!("a number above {lo}"),
            Rule::AtLeast(lo) => format!("at least {lo}"),
            Rule::Within(lo, hi) => format!("between {lo} and {hi}"),
        }
    }
}

/// The error of a value that breaks its rule: the key as in the file, its flag, and why.
pub(crate) fn broken<T: Ruled>(
    v: &T,
    rule: Rule,
    section: &str,
    name: &str,
    flag: Option<&str>,
) -> Result<(), SettingsError> {
    match v.broken(rule) {
        None => Ok(()),
        Some(why) => Err(SettingsError::Invalid {
            key: format!("{section}.{name}"),
            why: match flag {
                Some(flag) => format!("{why} (--{flag})"),
                None => why,
            },
        }),
    }
}

/// Why settings cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SettingsError {
    /// A value that cannot mean what it says.
    #[error("{key} {why}")]
    Invalid {
        /// The key, `section.name`.
        key: String,
        /// What it must be, and what it is.
        why: String,
    },
    /// Text that is not a configuration: invalid TOML, an unknown key, a value of the wrong type.
    #[error("{0}")]
    Toml(String),
}

/// A value as shown after a flag's help, `[default: …]`.
pub trait Shown {
    /// The text.
    fn shown(&self) -> String;
}

impl<T: Display> Shown for T {
    fn shown(&self) -> String {
        self.to_string()
    }
}

/// A section of the settings, as `section!` declares it.
pub trait Section: Default + Clone + Send + Sync + 'static {
    /// The enum of its keys.
    type Key: Copy + Ord + std::fmt::Debug + 'static;
    /// Its name in the TOML file.
    const NAME: &'static str;
    /// Every key, in declaration order.
    fn keys() -> &'static [Self::Key];
    /// The key of a name in the file.
    fn key(name: &str) -> Option<Self::Key>;
    /// Checks each value against its rule.
    fn check_rules(&self) -> Result<(), SettingsError>;
    /// Copies the value of `key` from `other`.
    fn take(&mut self, other: &Self, key: Self::Key);
    /// The flags of the keys that have one.
    #[cfg(feature = "cli")]
    fn args() -> Vec<clap::Arg>;
    /// The defaults with every flag given on the command line applied, and their keys.
    #[cfg(feature = "cli")]
    fn from_matches(m: &clap::ArgMatches) -> (Self, Vec<Self::Key>);
}

/// Declares a section of the settings. For each key: its doc (also the flag's help), the enum
/// variant that names it, the field and its type, the default, the flag (`none` for keys of the
/// file only) with its value name, and its [`Rule`].
macro_rules! section {
    (
        $(#[$meta:meta])*
        pub struct $Struct:ident, keys $Key:ident, in $section:literal {
            $(
                $(#[doc = $doc:literal])*
                $Variant:ident $field:ident : $ty:ty = $default:expr,
                    flag $flag:tt $value_name:literal, $rule:expr;
            )*
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(default, deny_unknown_fields)]
        pub struct $Struct {
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }

        impl Default for $Struct {
            fn default() -> Self {
                Self { $( $field: $default, )* }
            }
        }

        #[doc = concat!("The keys of [`", stringify!($Struct), "`], the `[", $section, "]` section.")]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $Key {
            $( $(#[doc = $doc])* $Variant, )*
        }

        impl $Key {
            /// The key's name in the file.
            pub fn name(self) -> &'static str {
                match self { $( $Key::$Variant => stringify!($field), )* }
            }

            /// The key's flag, without the dashes, when it has one.
            pub fn flag(self) -> Option<&'static str> {
                match self { $( $Key::$Variant => $crate::section::flag!($flag), )* }
            }
        }

        impl $crate::section::Section for $Struct {
            type Key = $Key;
            const NAME: &'static str = $section;

            fn keys() -> &'static [$Key] {
                &[ $( $Key::$Variant, )* ]
            }

            fn key(name: &str) -> Option<$Key> {
                match name {
                    $( stringify!($field) => Some($Key::$Variant), )*
                    _ => None,
                }
            }

            fn check_rules(&self) -> Result<(), $crate::section::SettingsError> {
                $( $crate::section::broken(&self.$field, $rule, $section, stringify!($field), $Key::$Variant.flag())?; )*
                Ok(())
            }

            fn take(&mut self, other: &Self, key: $Key) {
                match key { $( $Key::$Variant => self.$field = other.$field.clone(), )* }
            }

            #[cfg(feature = "cli")]
            fn args() -> Vec<clap::Arg> {
                let defaults = Self::default();
                let mut args = Vec::new();
                $(
                    if let Some(flag) = $Key::$Variant.flag() {
                        let help = concat!($($doc, "\n"),*);
                        let first = help.split("\n\n").next().unwrap_or(help).replace('\n', " ");
                        args.push(
                            clap::Arg::new(flag)
                                .long(flag)
                                .value_name($value_name)
                                .help(format!("{} [default: {}]", first.trim(), $crate::section::Shown::shown(&defaults.$field)))
                                .value_parser(clap::value_parser!($ty))
                                .allow_negative_numbers(true),
                        );
                    }
                )*
                args
            }

            #[cfg(feature = "cli")]
            fn from_matches(m: &clap::ArgMatches) -> (Self, Vec<$Key>) {
                let mut values = Self::default();
                let mut set = Vec::new();
                $(
                    if let Some(v) = $Key::$Variant.flag().and_then(|f| m.get_one::<$ty>(f)) {
                        values.$field = v.clone();
                        set.push($Key::$Variant);
                    }
                )*
                (values, set)
            }
        }
    };
}

/// A key's flag: `none`, or its name.
macro_rules! flag {
    (none) => {
        None
    };
    ($name:literal) => {
        Some($name)
    };
}

pub(crate) use {flag, section};
