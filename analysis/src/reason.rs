//! Why a type, constructor or method is not tested: one enum for every stage (the analysis,
//! the generator, the harness, the configuration), rendered to text in one place
//! ([`Reason`]'s `Display`). The JSON form keeps both: `{"kind": "…", "text": "…", …}`.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Why something is left untested.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "Tagged", from = "Tagged")]
pub enum Reason {
    /// The type is not `pub`: only its own crate can name it (and uses it through its
    /// public types, which covcon tests).
    NotPublic,
    /// A `pub` type in a private module that is not re-exported; `also` says what else
    /// stood in the way.
    PrivateModule {
        also: Option<Box<Reason>>,
    },
    NoConstructor,
    NoUsableConstructor,
    NoCallableMethod,
    /// Something in the signature covcon cannot call or generate.
    Signature {
        problems: Vec<Problem>,
    },
    /// `skip_types` / `skip_methods` in the configuration.
    Configured,
    /// Under `--strategy bc` the analysis removed every method pair: no two methods can run
    /// concurrently (one lock serialises them all).
    NothingToTest,
    /// The generated call does not compile (rustc's message).
    DoesNotCompile {
        error: String,
    },
    /// The run was interrupted (Ctrl-C, SIGTERM) before the type's turn.
    Interrupted,
    /// A handle other types hand out (`Owner::method`, each), with no constructor of its
    /// own: its methods are tested in those types' tests, on the handles they return.
    Handle {
        owners: Vec<String>,
    },
    /// No test could be generated for another reason, which the text gives.
    Other {
        text: String,
    },
}

/// One thing in a signature covcon cannot handle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Problem {
    Async,
    Unsafe,
    /// A parameter whose type covcon cannot generate, and why.
    Parameter {
        name: String,
        why: String,
    },
    /// A generic parameter of the function with no concrete type covcon can choose.
    Generic {
        name: String,
    },
    /// A call of a builder chain has a parameter covcon cannot generate.
    BuilderCall {
        name: String,
    },
    /// The trait the method comes from cannot be named outside its crate.
    PrivateTrait {
        name: String,
    },
}

impl Reason {
    /// Only its own crate can name the type: not a failure to test it.
    pub fn is_internal(&self) -> bool {
        matches!(self, Reason::NotPublic | Reason::PrivateModule { .. })
    }

    /// The reason of a type or member taken out of the tests by a stage that said no more (the
    /// harness could not drive it; an old model file with `"supported": false` alone).
    pub fn unexplained() -> Reason {
        Reason::Other {
            text: "covcon cannot drive it".into(),
        }
    }

    /// A signature with these problems (`None` when there are none).
    pub fn signature(problems: Vec<Problem>) -> Option<Reason> {
        (!problems.is_empty()).then_some(Reason::Signature { problems })
    }
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNREACHABLE: &str = "not reachable from outside its crate";
        match self {
            Reason::NotPublic => write!(f, "{UNREACHABLE}: the type is not `pub`"),
            Reason::PrivateModule { also: None } => write!(
                f,
                "{UNREACHABLE}: a `pub` type in a private module, not re-exported"
            ),
            Reason::PrivateModule { also: Some(also) } => write!(
                f,
                "{UNREACHABLE}: a `pub` type in a private module, not re-exported ({also})"
            ),
            Reason::NoConstructor => f.write_str(
                "no public constructor (`new`-like function, `Default` or builder) was found",
            ),
            Reason::NoUsableConstructor => {
                f.write_str("no constructor has parameters covcon can generate")
            }
            Reason::NoCallableMethod => f.write_str("no public `&self` method covcon can call"),
            Reason::Signature { problems } => {
                for (i, p) in problems.iter().enumerate() {
                    if i > 0 {
                        f.write_str("; ")?;
                    }
                    write!(f, "{p}")?;
                }
                Ok(())
            }
            Reason::Configured => f.write_str("skipped by configuration"),
            Reason::NothingToTest => f.write_str(
                "every method pair was removed by the analysis: no two methods can run concurrently",
            ),
            Reason::DoesNotCompile { error } => write!(f, "{error}"),
            Reason::Interrupted => f.write_str("the run was interrupted before its turn"),
            Reason::Handle { owners } => {
                let owners: Vec<String> = owners.iter().map(|o| format!("`{o}`")).collect();
                write!(
                    f,
                    "handed out by {}, whose tests call its methods on the handles they return",
                    owners.join(", ")
                )
            }
            Reason::Other { text } => f.write_str(text),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Async => f.write_str("`async fn`: covcon calls methods synchronously"),
            Problem::Unsafe => f.write_str("`unsafe fn`"),
            Problem::Parameter { name, why } => write!(f, "parameter `{name}`: {why}"),
            Problem::Generic { name } => write!(f, "generic method parameter `{name}`"),
            Problem::BuilderCall { name } => write!(
                f,
                "builder call `{name}` has a parameter covcon cannot generate"
            ),
            Problem::PrivateTrait { name } => {
                write!(f, "its trait `{name}` cannot be named outside its crate")
            }
        }
    }
}

/// The JSON shape: the variant's fields plus its text.
#[derive(Serialize, Deserialize)]
struct Tagged {
    #[serde(flatten)]
    reason: Untagged,
    #[serde(default)]
    text: String,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Untagged {
    NotPublic,
    PrivateModule {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        also: Option<Box<Reason>>,
    },
    NoConstructor,
    NoUsableConstructor,
    NoCallableMethod,
    Signature {
        problems: Vec<Problem>,
    },
    Configured,
    NothingToTest,
    DoesNotCompile {
        error: String,
    },
    Interrupted,
    Handle {
        owners: Vec<String>,
    },
    /// Its text is the `text` every reason carries.
    Other,
}

impl From<Reason> for Tagged {
    fn from(r: Reason) -> Tagged {
        let text = r.to_string();
        let reason = match r {
            Reason::NotPublic => Untagged::NotPublic,
            Reason::PrivateModule { also } => Untagged::PrivateModule { also },
            Reason::NoConstructor => Untagged::NoConstructor,
            Reason::NoUsableConstructor => Untagged::NoUsableConstructor,
            Reason::NoCallableMethod => Untagged::NoCallableMethod,
            Reason::Signature { problems } => Untagged::Signature { problems },
            Reason::Configured => Untagged::Configured,
            Reason::NothingToTest => Untagged::NothingToTest,
            Reason::DoesNotCompile { error } => Untagged::DoesNotCompile { error },
            Reason::Interrupted => Untagged::Interrupted,
            Reason::Handle { owners } => Untagged::Handle { owners },
            Reason::Other { .. } => Untagged::Other,
        };
        Tagged { reason, text }
    }
}

impl From<Tagged> for Reason {
    fn from(t: Tagged) -> Reason {
        match t.reason {
            Untagged::NotPublic => Reason::NotPublic,
            Untagged::PrivateModule { also } => Reason::PrivateModule { also },
            Untagged::NoConstructor => Reason::NoConstructor,
            Untagged::NoUsableConstructor => Reason::NoUsableConstructor,
            Untagged::NoCallableMethod => Reason::NoCallableMethod,
            Untagged::Signature { problems } => Reason::Signature { problems },
            Untagged::Configured => Reason::Configured,
            Untagged::NothingToTest => Reason::NothingToTest,
            Untagged::DoesNotCompile { error } => Reason::DoesNotCompile { error },
            Untagged::Interrupted => Reason::Interrupted,
            Untagged::Handle { owners } => Reason::Handle { owners },
            Untagged::Other => Reason::Other { text: t.text },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_serialise_with_their_kind_and_text_and_read_back() {
        let reasons = [
            Reason::NotPublic,
            Reason::PrivateModule {
                also: Some(Box::new(Reason::NoConstructor)),
            },
            Reason::Signature {
                problems: vec![
                    Problem::Unsafe,
                    Problem::Parameter {
                        name: "v".into(),
                        why: "`&mut Vec<u8>`: a `&mut` argument cannot be shared".into(),
                    },
                ],
            },
            Reason::Other {
                text: "budget ran out".into(),
            },
        ];
        let json: Vec<String> = reasons
            .iter()
            .map(|r| serde_json::to_string(r).expect("serialises"))
            .collect();
        assert_eq!(
            json[0],
            r#"{"kind":"not_public","text":"not reachable from outside its crate: the type is not `pub`"}"#
        );
        assert!(json[2].contains(r#""text":"`unsafe fn`; parameter `v`: `&mut Vec<u8>`: a `&mut` argument cannot be shared""#), "{}", json[2]);
        assert_eq!(json[3], r#"{"kind":"other","text":"budget ran out"}"#);
        for (r, j) in reasons.iter().zip(&json) {
            let back: Reason = serde_json::from_str(j).expect("reads back");
            assert_eq!(&back, r);
        }
    }

    /// A member's reason is written as `supported` and `reason` beside it, where the field
    /// was (the JSON `analyze --format json` had when `supported` was stored); read back, a
    /// `"supported": false` without a reason gets a generic one.
    #[test]
    fn support_is_written_as_supported_and_reason_and_read_back() {
        use crate::model::Constructor;
        let tested = Constructor {
            name: "new".into(),
            ..Constructor::default()
        };
        let untested = Constructor {
            name: "new".into(),
            reason: Some(Reason::Configured),
            ..Constructor::default()
        };
        let text = |c: &Constructor| serde_json::to_string(c).unwrap();
        assert!(
            text(&tested).ends_with(r#""supported":true}"#),
            "{}",
            text(&tested)
        );
        assert!(
            text(&untested)
                .ends_with(r#""supported":false,"reason":{"kind":"configured","text":"skipped by configuration"}}"#),
            "{}",
            text(&untested)
        );
        for c in [&tested, &untested] {
            assert_eq!(&serde_json::from_str::<Constructor>(&text(c)).unwrap(), c);
        }
        let bare = text(&tested).replace(r#""supported":true"#, r#""supported":false"#);
        let read: Constructor = serde_json::from_str(&bare).unwrap();
        assert!(!read.supported());
        let missing = text(&tested).replace(r#","supported":true"#, "");
        assert!(serde_json::from_str::<Constructor>(&missing).is_err());
    }
}

/// How a type's, constructor's or method's [`Reason`] is written in the model's JSON: as
/// `"supported": bool` and, when it is not, `"reason"` beside it (the form `analyze --format
/// json` has always had). Read back, `"supported": false` with no reason (which the model no
/// longer has) gets a generic one, and a reason beside `"supported": true` is dropped.
pub(crate) mod support {
    use super::Reason;
    use serde::ser::SerializeMap;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(
        reason: &Option<Reason>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("supported", &reason.is_none())?;
        if let Some(reason) = reason {
            map.serialize_entry("reason", reason)?;
        }
        map.end()
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Reason>, D::Error> {
        #[derive(Deserialize)]
        struct Support {
            supported: bool,
            #[serde(default)]
            reason: Option<Reason>,
        }
        let support = Support::deserialize(deserializer)?;
        Ok(match (support.supported, support.reason) {
            (true, _) => None,
            (false, Some(reason)) => Some(reason),
            (false, None) => Some(Reason::unexplained()),
        })
    }
}
