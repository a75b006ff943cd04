//! Argument pools: the small sets of values arguments are drawn from, so that calls in the two
//! threads collide on the same keys, and the generation of a [`Value`] for every [`ParamKind`].
//!
//! All pools live in [`Pools`] so that configuration can override them in one place.

use crate::testcase::{Built, BuiltForm, Value};
use analysis::{ConstructorKind, ParamKind, ValueType, PATH_BUF};
use rand::seq::SliceRandom;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The values arguments are drawn from. Small on purpose: two threads that pick keys from
/// `0..4` often pick the same one, which is where interference shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Pools {
    /// Integers for every integer type (negative ones are skipped for unsigned types).
    pub ints: Vec<i128>,
    /// Extra integers for signed types.
    pub signed_ints: Vec<i128>,
    /// Percentage of integer draws that take the type's MIN or MAX instead.
    pub edge_percent: u32,
    /// Strings for `String` and `&str`.
    pub strings: Vec<String>,
    /// Paths for `PathBuf`, `&Path` and `AsRef<Path>` (`PathBuf::from(..)`, [`PATH_BUF`]): in
    /// the fresh, empty directory each run of a type that takes paths gets, so `.` is a
    /// directory that exists (drawn more often: a store opened on a directory is built only
    /// with it) and the others are names in it.
    pub paths: Vec<String>,
    pub chars: Vec<char>,
    /// Finite values only: NaN and infinities have no JSON form.
    pub floats: Vec<f64>,
    /// Durations in microseconds.
    pub durations_us: Vec<u64>,
    /// Percentage of integer draws that take a size the type's own code names or a neighbour
    /// of it (`const CAP: usize = 31` → 30, 31, 32), when it names any: where a bounded or
    /// segmented type changes shape.
    pub own_percent: u32,
    /// Longest `Vec` or slice generated.
    pub max_list_len: usize,
    /// Percentage of `Option` draws that are `None`.
    pub none_percent: u32,
    /// Percentage of `Result` draws that are `Err`, where the error can be generated.
    pub err_percent: u32,
    /// Percentage of tests, among those calling a method that takes an instance, that build
    /// a second instance.
    pub second_instance_percent: u32,
    /// Percentage of instance arguments that name the other instance rather than the receiver
    /// (when there is a second instance).
    pub other_instance_percent: u32,
    /// Percentage of tests with a second instance in which thread 2 calls on instance 1.
    pub second_receiver_percent: u32,
    /// Counts a prefix call is repeated (`for _ in 0..n`), besides the sizes the type's code
    /// names: capacity-like boundaries, where chunked and segmented types change shape.
    pub repeats: Vec<u32>,
    /// Percentage of prefix calls that are repeated.
    pub repeat_percent: u32,
    /// Percentage of threads that keep the handles and values (keys a method returns) their
    /// calls need from their own calls just before, instead of taking ones kept before the
    /// prefix, which both threads share: value flow inside the concurrent part.
    pub flow_percent: u32,
    /// Percentage of plain arguments (integers, strings, characters, floats) that take a value
    /// an earlier call of the test passed for an argument of the same type, when there is
    /// one: the same key inserted in the prefix, read by one thread and removed by the other.
    pub reuse_percent: u32,
}

impl Pools {
    /// One of the integers pool's values whose size is at most `bound` (1 when none is): what
    /// takes the place of a drawn integer past a bound the callee is known to break or crawl
    /// at (a capacity of a billion, `add_permits(usize::MAX)` against a `# Panics` section).
    pub(crate) fn small_int(&self, bound: i128, rng: &mut impl Rng) -> i128 {
        let small: Vec<i128> = (self.ints.iter().copied())
            .filter(|i| i.abs() <= bound)
            .collect();
        *small.choose(rng).unwrap_or(&1)
    }
}

impl Default for Pools {
    fn default() -> Pools {
        Pools {
            ints: vec![0, 1, 2, 3],
            signed_ints: vec![-1],
            edge_percent: 5,
            strings: ["", "a", "b", "ab"].map(String::from).to_vec(),
            paths: [".", ".", ".", "a", "b"].map(String::from).to_vec(),
            chars: vec!['a', 'b', 'c'],
            floats: vec![0.0, 1.0, -1.0, 2.5],
            durations_us: vec![0, 1, 10, 100, 1_000, 2_000],
            own_percent: 20,
            max_list_len: 3,
            none_percent: 25,
            err_percent: 25,
            second_instance_percent: 75,
            other_instance_percent: 75,
            second_receiver_percent: 50,
            repeats: vec![2, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 100, 128, 129],
            repeat_percent: 20,
            flow_percent: 35,
            reuse_percent: 75,
        }
    }
}

/// Deepest nesting followed through generic instantiations (guards `K = Vec<K>` loops).
const MAX_DEPTH: usize = 8;

/// Draws values for parameters, given the pools and the type's generic instantiation.
pub(crate) struct ValueGen<'a> {
    pub(crate) pools: &'a Pools,
    /// Type parameter name to the kind it is instantiated with; missing ones are small
    /// non-negative integers, which fit whatever integer type the oracle picks.
    pub(crate) instantiation: &'a BTreeMap<String, ParamKind>,
    /// The type's value types, for [`ParamKind::Value`] arguments.
    pub(crate) values: &'a [ValueType],
    /// What the type's own code names, which arguments also take.
    pub(crate) own: &'a OwnValues,
}

/// Values a type's own code names ([`analysis::TypeModel::constants`] and
/// [`analysis::TypeModel::durations`]), which its arguments take besides the pools': a size with
/// its neighbours (31 → 30, 31, 32), so an index or a count lands on each side of a boundary, and
/// its durations, so a timeout matches its own tick.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct OwnValues {
    pub(crate) ints: Vec<i128>,
    pub(crate) durations_us: Vec<u64>,
}

impl OwnValues {
    pub(crate) fn of(model: &analysis::TypeModel) -> OwnValues {
        let mut ints: Vec<i128> = model
            .constants
            .iter()
            .flat_map(|&c| {
                let c = i128::from(c);
                [c - 1, c, c + 1]
            })
            .collect();
        ints.sort_unstable();
        ints.dedup();
        OwnValues {
            ints,
            durations_us: model.durations.clone(),
        }
    }
}

/// Which instances exist in the test and which one the current call is made on.
#[derive(Debug, Clone, Copy)]
pub(crate) struct InstanceCtx {
    pub(crate) instances: usize,
    pub(crate) receiver: usize,
}

impl ValueGen<'_> {
    /// `Ok` when every value of `kind` can be generated, else why not.
    pub(crate) fn check(&self, kind: &ParamKind) -> Result<(), String> {
        self.check_at(kind, 0)
    }

    fn check_at(&self, kind: &ParamKind, depth: usize) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err("parameter type nests too deeply".to_string());
        }
        match kind {
            ParamKind::Unsupported => Err("a parameter type has no value generator".to_string()),
            ParamKind::Vec { elem } | ParamKind::Slice { elem } => self.check_at(elem, depth + 1),
            ParamKind::Option { inner }
            | ParamKind::Ref { inner }
            | ParamKind::Pointer { inner, .. } => self.check_at(inner, depth + 1),
            ParamKind::Result { ok, .. } => self.check_at(ok, depth + 1),
            ParamKind::Closure { returns, .. } => self.check_at(returns, depth + 1),
            ParamKind::Tuple { elems } => {
                elems.iter().try_for_each(|e| self.check_at(e, depth + 1))
            }
            ParamKind::Generic { name } => match self.instantiation.get(name) {
                Some(inner) => self.check_at(inner, depth + 1),
                None => Ok(()),
            },
            ParamKind::Value { path } => {
                let constructors = self.buildable(path, depth);
                if constructors.is_empty() {
                    Err(format!("covcon cannot build a `{path}`"))
                } else {
                    Ok(())
                }
            }
            ParamKind::Int { .. }
            | ParamKind::Bool
            | ParamKind::Char
            | ParamKind::Float { .. }
            | ParamKind::String
            | ParamKind::Str
            | ParamKind::Duration
            | ParamKind::NonZero { .. }
            | ParamKind::Instance { .. }
            | ParamKind::FromReceiver { .. }
            | ParamKind::Handle { .. }
            | ParamKind::Returned { .. } => Ok(()),
        }
    }

    /// A value for `kind`. Call [`ValueGen::check`] first: unsupported kinds give `Int(0)`.
    pub(crate) fn value(&self, kind: &ParamKind, ctx: InstanceCtx, rng: &mut impl Rng) -> Value {
        self.value_at(kind, ctx, rng, 0)
    }

    fn value_at(
        &self,
        kind: &ParamKind,
        ctx: InstanceCtx,
        rng: &mut impl Rng,
        depth: usize,
    ) -> Value {
        let p = self.pools;
        match kind {
            ParamKind::Int { signed, bits } => Value::Int(self.int(*signed, *bits, rng)),
            // Zero would be made one by the harness; drawing one keeps the test honest.
            ParamKind::NonZero { signed, bits } => match self.int(*signed, *bits, rng) {
                0 => Value::Int(1),
                n => Value::Int(n),
            },
            ParamKind::Bool => Value::Bool(rng.gen()),
            ParamKind::Char => Value::Char(p.chars.choose(rng).copied().unwrap_or('a')),
            ParamKind::Float { .. } => Value::Float(p.floats.choose(rng).copied().unwrap_or(0.0)),
            ParamKind::String | ParamKind::Str => {
                Value::Str(p.strings.choose(rng).cloned().unwrap_or_default())
            }
            ParamKind::Vec { elem } | ParamKind::Slice { elem } => {
                let len = rng.gen_range(0..=p.max_list_len);
                Value::List(
                    (0..len)
                        .map(|_| self.value_at(elem, ctx, rng, depth + 1))
                        .collect(),
                )
            }
            ParamKind::Option { inner } => {
                if percent(rng, p.none_percent) {
                    Value::Option(None)
                } else {
                    Value::Option(Some(Box::new(self.value_at(inner, ctx, rng, depth + 1))))
                }
            }
            // The harness passes a reference to the generated value, `Ok` of it, or a
            // pointer to it.
            ParamKind::Ref { inner } | ParamKind::Pointer { inner, .. } => {
                self.value_at(inner, ctx, rng, depth + 1)
            }
            // `Err` now and then, when the error is something covcon can make.
            ParamKind::Result { ok, err } => match err {
                Some(err)
                    if percent(rng, p.err_percent) && self.check_at(err, depth + 1).is_ok() =>
                {
                    Value::Err(Box::new(self.value_at(err, ctx, rng, depth + 1)))
                }
                _ => self.value_at(ok, ctx, rng, depth + 1),
            },
            ParamKind::Tuple { elems } => Value::Tuple(
                elems
                    .iter()
                    .map(|e| self.value_at(e, ctx, rng, depth + 1))
                    .collect(),
            ),
            ParamKind::Duration => {
                let (pool, own) = (&p.durations_us, &self.own.durations_us);
                let us = match rng.gen_range(0..(pool.len() + own.len()).max(1)) {
                    i if i < pool.len() => pool[i],
                    i => own.get(i - pool.len()).copied().unwrap_or(1),
                };
                Value::Duration(us)
            }
            ParamKind::Instance { .. } => Value::Instance(self.instance(ctx, rng)),
            ParamKind::Closure { returns, .. } => {
                Value::Closure(Box::new(self.value_at(returns, ctx, rng, depth + 1)))
            }
            ParamKind::Generic { name } => match self.instantiation.get(name) {
                Some(inner) if depth < MAX_DEPTH => self.value_at(inner, ctx, rng, depth + 1),
                _ => Value::Int(self.small_unsigned(rng)),
            },
            ParamKind::Value { path } => self.built(path, ctx, rng, depth),
            ParamKind::FromReceiver { method, .. } => Value::FromReceiver(method.clone()),
            // Which handle is the test's to say (`TestGenerator::method_call`).
            // A key of a standard type: a generated one (the caller keeps it half of the time).
            ParamKind::Returned { or: Some(kind), .. } => self.value_at(kind, ctx, rng, depth + 1),
            ParamKind::Handle { .. } | ParamKind::Returned { .. } => Value::Handle(0),
            ParamKind::Unsupported => Value::Int(0),
        }
    }

    /// The constructors of value type `path` whose every argument can be generated.
    fn buildable(&self, path: &str, depth: usize) -> Vec<&analysis::Constructor> {
        let Some(value) = self.values.iter().find(|v| v.path == path) else {
            return Vec::new();
        };
        value
            .constructors
            .iter()
            .filter(|c| c.supported())
            .filter(|c| {
                c.params
                    .iter()
                    .chain(c.chain.iter().flat_map(|link| &link.params))
                    .all(|p| self.check_at(&p.kind, depth + 1).is_ok() && !takes_instance(&p.kind))
            })
            .collect()
    }

    /// A value of value type `path`, from one of its constructors chosen at random.
    fn built(&self, path: &str, ctx: InstanceCtx, rng: &mut impl Rng, depth: usize) -> Value {
        let constructors = self.buildable(path, depth);
        let Some(c) = constructors.choose(rng) else {
            return Value::Int(0);
        };
        let args = if path == PATH_BUF && c.name == "from" && !self.pools.paths.is_empty() {
            vec![Value::Str(
                self.pools.paths.choose(rng).expect("not empty").clone(),
            )]
        } else {
            c.params
                .iter()
                .chain(c.chain.iter().flat_map(|link| &link.params))
                .map(|p| self.value_at(&p.kind, ctx, rng, depth + 1))
                .collect()
        };
        let form = match c.kind {
            ConstructorKind::Default => BuiltForm::Default,
            ConstructorKind::Variant => BuiltForm::Variant,
            ConstructorKind::Literal => BuiltForm::Literal {
                fields: c.params.iter().map(|p| p.name.clone()).collect(),
                variant: path.rsplit("::").next() != Some(c.name.as_str()),
            },
            ConstructorKind::Function | ConstructorKind::Builder => BuiltForm::Call {
                chain: c
                    .chain
                    .iter()
                    .map(|link| (link.name.clone(), link.params.len()))
                    .collect(),
                owner: c.owner.clone(),
            },
        };
        Value::Built(Box::new(Built {
            ty: path.to_string(),
            ctor: c.name.clone(),
            args,
            form,
        }))
    }

    fn int(&self, signed: bool, bits: u16, rng: &mut impl Rng) -> i128 {
        if percent(rng, self.pools.edge_percent) {
            let (min, max) = int_range(signed, bits);
            return if rng.gen() { min } else { max };
        }
        let (min, max) = int_range(signed, bits);
        if !self.own.ints.is_empty() && percent(rng, self.pools.own_percent) {
            let fitting: Vec<i128> = self
                .own
                .ints
                .iter()
                .copied()
                .filter(|v| (min..=max).contains(v))
                .collect();
            if let Some(&v) = fitting.choose(rng) {
                return v;
            }
        }
        let extra: &[i128] = if signed { &self.pools.signed_ints } else { &[] };
        let candidates: Vec<i128> = self
            .pools
            .ints
            .iter()
            .chain(extra)
            .copied()
            .filter(|v| (min..=max).contains(v))
            .collect();
        candidates.choose(rng).copied().unwrap_or(0)
    }

    fn small_unsigned(&self, rng: &mut impl Rng) -> i128 {
        let small: Vec<i128> = self
            .pools
            .ints
            .iter()
            .copied()
            .filter(|v| (0..=127).contains(v))
            .collect();
        small.choose(rng).copied().unwrap_or(0)
    }

    fn instance(&self, ctx: InstanceCtx, rng: &mut impl Rng) -> usize {
        if ctx.instances > 1 && percent(rng, self.pools.other_instance_percent) {
            let other = rng.gen_range(0..ctx.instances - 1);
            if other >= ctx.receiver {
                other + 1
            } else {
                other
            }
        } else {
            ctx.receiver
        }
    }
}

/// Whether a value of `kind` contains another instance of the type under test.
pub(crate) fn takes_instance(kind: &ParamKind) -> bool {
    kind.any(&|k| matches!(k, ParamKind::Instance { .. }))
}

/// True with the given probability in percent.
pub(crate) fn percent(rng: &mut impl Rng, pct: u32) -> bool {
    rng.gen_range(0..100) < pct
}

/// The smallest and largest value of an integer type; unknown widths count as 64 bits and
/// `u128::MAX`, which `Value::Int` cannot hold, becomes `i128::MAX`.
pub(crate) fn int_range(signed: bool, bits: u16) -> (i128, i128) {
    let bits = if bits == 0 || bits > 128 {
        64
    } else {
        u32::from(bits)
    };
    match (signed, bits) {
        (true, 128) => (i128::MIN, i128::MAX),
        (true, b) => (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1),
        (false, 128) => (0, i128::MAX),
        (false, b) => (0, (1i128 << b) - 1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::StdRng;
    use rand::SeedableRng;

    /// Draws 200 values of `kind` and compares the sorted distinct ones with `expect`.
    fn check(kind: ParamKind, instances: usize, expect: &str) {
        check_own(kind, instances, &OwnValues::default(), expect)
    }

    /// As [`check`], for a type whose own code names `own`.
    fn check_own(kind: ParamKind, instances: usize, own: &OwnValues, expect: &str) {
        let pools = Pools {
            edge_percent: 0,
            ..Pools::default()
        };
        let instantiation = BTreeMap::from([("V".to_string(), ParamKind::Bool)]);
        let gen = ValueGen {
            pools: &pools,
            instantiation: &instantiation,
            values: &[],
            own,
        };
        let mut rng = StdRng::seed_from_u64(7);
        let ctx = InstanceCtx {
            instances,
            receiver: 0,
        };
        let mut seen: Vec<String> = (0..200)
            .map(|_| format!("{:?}", gen.value(&kind, ctx, &mut rng)))
            .collect();
        seen.sort();
        seen.dedup();
        assert_eq!(seen.join(" "), expect);
    }

    #[test]
    fn unsigned_integers_come_from_zero_to_three() {
        check(
            ParamKind::Int {
                signed: false,
                bits: 32,
            },
            1,
            "Int(0) Int(1) Int(2) Int(3)",
        );
    }

    #[test]
    fn signed_integers_also_get_minus_one() {
        check(
            ParamKind::Int {
                signed: true,
                bits: 8,
            },
            1,
            "Int(-1) Int(0) Int(1) Int(2) Int(3)",
        );
    }

    #[test]
    fn strings_come_from_a_small_alphabet() {
        check(ParamKind::Str, 1, r#"Str("") Str("a") Str("ab") Str("b")"#);
    }

    #[test]
    fn paths_are_the_run_directory_and_names_in_it() {
        let pools = Pools::default();
        let path_buf = ValueType {
            path: PATH_BUF.into(),
            constructors: vec![analysis::Constructor {
                name: "from".into(),
                params: vec![analysis::Param {
                    name: "path".into(),
                    ty: "String".into(),
                    kind: ParamKind::String,
                }],
                ..Default::default()
            }],
        };
        let gen = ValueGen {
            pools: &pools,
            instantiation: &BTreeMap::new(),
            values: std::slice::from_ref(&path_buf),
            own: &OwnValues::default(),
        };
        let mut rng = StdRng::seed_from_u64(7);
        let ctx = InstanceCtx {
            instances: 1,
            receiver: 0,
        };
        let kind = ParamKind::Value {
            path: PATH_BUF.into(),
        };
        let mut seen: Vec<String> = (0..100)
            .map(|_| match gen.value(&kind, ctx, &mut rng) {
                Value::Built(b) => format!("{}({:?})", b.ctor, b.args),
                other => format!("{other:?}"),
            })
            .collect();
        seen.sort();
        seen.dedup();
        assert_eq!(
            seen.join(" "),
            r#"from([Str(".")]) from([Str("a")]) from([Str("b")])"#
        );
    }

    #[test]
    fn durations_are_a_few_micro_or_milliseconds() {
        check(
            ParamKind::Duration,
            1,
            "Duration(0) Duration(1) Duration(10) Duration(100) Duration(1000) Duration(2000)",
        );
    }

    #[test]
    fn a_types_own_sizes_with_their_neighbours_and_its_durations_are_drawn_too() {
        let model = analysis::TypeModel {
            constants: vec![31, 255],
            durations: vec![5_000],
            ..Default::default()
        };
        let own = OwnValues::of(&model);
        // 256 does not fit a u8.
        check_own(
            ParamKind::Int {
                signed: false,
                bits: 8,
            },
            1,
            &own,
            "Int(0) Int(1) Int(2) Int(254) Int(255) Int(3) Int(30) Int(31) Int(32)",
        );
        check_own(
            ParamKind::Duration,
            1,
            &own,
            "Duration(0) Duration(1) Duration(10) Duration(100) Duration(1000) Duration(2000) Duration(5000)",
        );
    }

    #[test]
    fn instance_arguments_name_the_receiver_when_there_is_one_instance() {
        check(
            ParamKind::Instance {
                passing: Default::default(),
            },
            1,
            "Instance(0)",
        );
    }

    #[test]
    fn instance_arguments_name_either_instance_when_there_are_two() {
        check(
            ParamKind::Instance {
                passing: Default::default(),
            },
            2,
            "Instance(0) Instance(1)",
        );
    }

    #[test]
    fn generic_parameters_follow_the_instantiation() {
        check(
            ParamKind::Generic { name: "V".into() },
            1,
            "Bool(false) Bool(true)",
        );
    }

    #[test]
    fn uninstantiated_generic_parameters_are_small_integers() {
        check(
            ParamKind::Generic { name: "K".into() },
            1,
            "Int(0) Int(1) Int(2) Int(3)",
        );
    }

    #[test]
    fn closures_return_a_pool_value() {
        check(
            ParamKind::Closure {
                returns: Box::new(ParamKind::Bool),
                arity: 0,
                shown: vec![],
            },
            1,
            "Closure(Bool(false)) Closure(Bool(true))",
        );
    }

    /// A `Result` is `Err` now and then where its error can be made, never where it cannot.
    #[test]
    fn results_are_sometimes_err_where_the_error_can_be_made() {
        let result = |err: Option<ParamKind>| ParamKind::Closure {
            returns: Box::new(ParamKind::Result {
                ok: Box::new(ParamKind::Bool),
                err: err.map(Box::new),
            }),
            arity: 0,
            shown: vec![],
        };
        check(
            result(Some(ParamKind::Char)),
            1,
            "Closure(Bool(false)) Closure(Bool(true)) Closure(Err(Char('a'))) Closure(Err(Char('b'))) Closure(Err(Char('c')))",
        );
        check(result(None), 1, "Closure(Bool(false)) Closure(Bool(true))");
        check(
            result(Some(ParamKind::Unsupported)),
            1,
            "Closure(Bool(false)) Closure(Bool(true))",
        );
    }

    #[test]
    fn options_are_sometimes_none() {
        check(
            ParamKind::Option {
                inner: Box::new(ParamKind::Bool),
            },
            1,
            "Option(None) Option(Some(Bool(false))) Option(Some(Bool(true)))",
        );
    }

    #[test]
    fn integer_edges_fit_their_type() {
        let cases = [
            ((false, 8), (0, 255)),
            ((true, 8), (-128, 127)),
            ((false, 0), (0, u64::MAX as i128)),
            ((false, 128), (0, i128::MAX)),
            ((true, 128), (i128::MIN, i128::MAX)),
        ];
        for ((signed, bits), expect) in cases {
            assert_eq!(
                int_range(signed, bits),
                expect,
                "signed {signed} bits {bits}"
            );
        }
    }

    #[test]
    fn unsupported_and_self_referential_kinds_are_rejected() {
        let pools = Pools::default();
        let instantiation = BTreeMap::from([(
            "K".to_string(),
            ParamKind::Vec {
                elem: Box::new(ParamKind::Generic { name: "K".into() }),
            },
        )]);
        let gen = ValueGen {
            pools: &pools,
            instantiation: &instantiation,
            values: &[],
            own: &OwnValues::default(),
        };
        let nested = ParamKind::Option {
            inner: Box::new(ParamKind::Unsupported),
        };
        assert!(gen.check(&nested).is_err());
        assert!(gen.check(&ParamKind::Generic { name: "K".into() }).is_err());
        assert!(gen
            .check(&ParamKind::Tuple {
                elems: vec![ParamKind::Bool, ParamKind::Str]
            })
            .is_ok());
    }
}
