//! The names the protocol writes: every object's field names ([`Field`]) and the values of its
//! three tags (`op` of a request, `kind` of an outcome, `strategy` of a schedule control),
//! each written once here and read back through the same table.

use serde::de::{Deserialize, Deserializer, Visitor};
use serde::ser::SerializeMap;
use serde::Serialize;
use std::fmt;

/// An enum of names with their text on the wire, `name()` and `of(text)`; with `else
/// Variant`, a variant for every other text.
macro_rules! names {
    (
        $(#[$meta:meta])*
        enum $ty:ident { $($(#[$vmeta:meta])* $variant:ident = $name:literal,)* }
        $(else $other:ident)?
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub(crate) enum $ty {
            $($(#[$vmeta])* $variant,)*
            $($other,)?
        }

        impl $ty {
            /// The name on the wire.
            pub(crate) const fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)*
                    $($ty::$other => "",)?
                }
            }

            /// The variant `name` stands for, if any.
            pub(crate) fn of(name: &str) -> Option<$ty> {
                match name {
                    $($name => Some($ty::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

names! {
    /// A field name of the protocol's objects, decoded without allocating.
    enum Field {
        // Requests.
        Op = "op",
        Test = "test",
        Tests = "tests",
        Noise = "noise",
        TimeoutMs = "timeout_ms",
        Capture = "capture",
        Repeat = "repeat",
        RepeatForMs = "repeat_for_ms",
        Order = "order",
        Paced = "paced",
        OwnThreads = "own_threads",
        // Noise and schedule control.
        Seed = "seed",
        YieldP = "yield_p",
        SpinP = "spin_p",
        SleepP = "sleep_p",
        Control = "control",
        PauseUs = "pause_us",
        Strategy = "strategy",
        Depth = "depth",
        Steps = "steps",
        First = "first",
        At = "at",
        // Responses.
        TestId = "test_id",
        Outcome = "outcome",
        Events = "events",
        Covered = "covered",
        PrefixResults = "prefix_results",
        Results = "results",
        FinalState = "final_state",
        ElapsedUs = "elapsed_us",
        SetupUs = "setup_us",
        Runs = "runs",
        Schedule = "schedule",
        TimedOut = "timed_out",
        Recovered = "recovered",
        Others = "others",
        Switches = "switches",
        Free = "free",
        Wakes = "wakes",
        Handoffs = "handoffs",
        // Outcomes.
        Kind = "kind",
        Thread = "thread",
        Call = "call",
        Method = "method",
        Message = "message",
        Location = "location",
        Also = "also",
        Inside = "inside",
        BlockedForGood = "blocked_for_good",
        LostWakeup = "lost_wakeup",
        // Events.
        Clock = "clock",
        TypePath = "type_path",
        Start = "start",
    }
    else Unknown
}

names! {
    /// What a request asks for (`op`).
    enum Op {
        Ping = "ping",
        Concurrent = "concurrent",
        Sequential = "sequential",
        Batch = "batch",
    }
}

names! {
    /// How a run ended (an outcome's `kind`).
    enum Kind {
        Passed = "passed",
        Panicked = "panicked",
        Deadlocked = "deadlocked",
        SetupFailed = "setup_failed",
        Crashed = "crashed",
    }
}

names! {
    /// How a concurrent run is scheduled (a control's `strategy`).
    enum Strategy {
        Free = "free",
        Pct = "pct",
        Random = "random",
        Preempt = "preempt",
    }
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Field, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E>(self, name: &str) -> Result<Field, E> {
                Ok(Field::of(name).unwrap_or(Field::Unknown))
            }
        }
        d.deserialize_identifier(V)
    }
}

/// Writes one field of an object.
pub(crate) fn put<M: SerializeMap, T: Serialize + ?Sized>(
    map: &mut M,
    field: Field,
    value: &T,
) -> Result<(), M::Error> {
    map.serialize_entry(field.name(), value)
}

/// `found`, or the error of a missing field.
pub(crate) fn needed<T, E: serde::de::Error>(found: Option<T>, field: Field) -> Result<T, E> {
    found.ok_or_else(|| E::missing_field(field.name()))
}
