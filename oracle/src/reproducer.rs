//! [`render_reproducer`]: a violation's test case as a standalone Rust `#[test]` that uses the
//! user's crate by its library name (no covcon runtime, no instrumentation), so it can be
//! pasted into the crate's `tests/` directory as it is.
//!
//! The test builds the instances, runs the prefix, then starts the two suffixes on two threads
//! released together by a spinning counter, and repeats until a thread panics (the panic is
//! re-raised) or the two threads do not finish in time (reported as a deadlock), for at most a
//! minute. Argument values are rendered the way the harness decodes them.
//!
//! [`render_results_reproducer`] writes the reproducer of a wrong result: it embeds the
//! outcomes the linearizations give ([`AllowedOutcomes`]: the `Debug` texts of the compared
//! suffix calls' results and of the final state, with what varied between sequential runs left
//! out), captures the same texts in each concurrent run, and fails with the observed texts
//! next to the closest allowed outcome's when they match none.

use crate::harness::PreparedType;
use crate::results::AllowedOutcomes;
use analysis::{ConstructorKind, InstancePassing, Param, ParamKind, ReturnShape, TypeModel};
use generator::{Call, TestCase, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The reproducer's source. `prepared` gives the generic instantiation the harness used (a
/// generic type without it gets `u32` for its parameters); `headline` says what went wrong
/// (`panic "key inserted twice" at src/lib.rs:31`) and goes into the file's doc comment.
pub fn render_reproducer(
    ty: &TypeModel,
    test: &TestCase,
    prepared: Option<&PreparedType>,
    headline: &str,
) -> String {
    render(ty, test, prepared, headline, None)
}

/// The reproducer of a wrong result: as [`render_reproducer`], and each run also fails when
/// the compared texts match none of `allowed`'s outcomes (computed for this `test`).
pub fn render_results_reproducer(
    ty: &TypeModel,
    test: &TestCase,
    prepared: Option<&PreparedType>,
    headline: &str,
    allowed: &AllowedOutcomes,
) -> String {
    render(ty, test, prepared, headline, Some(allowed))
}

fn render(
    ty: &TypeModel,
    test: &TestCase,
    prepared: Option<&PreparedType>,
    headline: &str,
    allowed: Option<&AllowedOutcomes>,
) -> String {
    let instantiation: BTreeMap<String, String> = match prepared {
        Some(p) => p.instantiation.clone(),
        None => crate::codegen::generic_names(&ty.generics)
            .into_iter()
            .zip(crate::codegen::instantiate(&ty.generics, "u32"))
            .filter(|(n, _)| !n.starts_with('\''))
            .collect(),
    };
    let concrete = match prepared {
        Some(p) if !p.concrete.is_empty() => p.concrete.clone(),
        _ => {
            let args = crate::codegen::instantiate(&ty.generics, "u32");
            let path = format!("::{}", test.type_path);
            if args.is_empty() {
                path
            } else {
                format!("{path}<{}>", args.join(", "))
            }
        }
    };
    let cx = Render {
        ty,
        instantiation: &instantiation,
    };
    let mut out = String::new();
    // The pair the test was built for, or the first call of each thread.
    let first = |t: usize| test.threads[t].first().map_or("", |c| c.method.as_str());
    let m1 = Some(test.pair[0].as_str())
        .filter(|m| !m.is_empty())
        .unwrap_or(first(0));
    let m2 = Some(test.pair[1].as_str())
        .filter(|m| !m.is_empty())
        .unwrap_or(first(1));
    let _ = writeln!(
        out,
        "//! Reproduces a thread-safety violation cargo covcon found in `{}`: `{m1}` and `{m2}`\n\
         //! running concurrently: {}.\n\
         //!\n\
         //! Test case {} (noise seed {}). Put this file in the crate's `tests/` directory and run\n\
         //! `cargo test --release --test <file name>`: it repeats the test for up to a minute and\n\
         //! fails as soon as the failure shows. `cargo covcon replay` runs the `.json` twin.\n",
        test.type_path,
        headline.replace('\n', " "),
        test.id,
        test.noise_seed
    );
    out.push_str(
        "use std::sync::atomic::{AtomicUsize, Ordering};\n\
         use std::sync::Arc;\n\
         use std::time::{Duration, Instant};\n",
    );
    // The crate's traits, for trait methods; the names above shadow anything it exports.
    let krate = test.type_path.split("::").next().unwrap_or_default();
    let _ = writeln!(out, "#[allow(unused_imports)]\nuse {krate}::*;\n");
    let _ = writeln!(out, "type T = {concrete};\n");
    out.push_str(
        "/// Spins until both threads are here, so that their calls start together.\n\
         fn start_together(ready: &AtomicUsize) {\n\
        \x20   ready.fetch_add(1, Ordering::SeqCst);\n\
        \x20   let mut spins = 0u32;\n\
        \x20   while ready.load(Ordering::SeqCst) < 2 {\n\
        \x20       spins += 1;\n\
        \x20       if spins < 10_000 {\n\
        \x20           std::hint::spin_loop();\n\
        \x20       } else {\n\
        \x20           std::thread::yield_now();\n\
        \x20       }\n\
        \x20   }\n\
         }\n\n",
    );
    if let Some(allowed) = allowed {
        render_allowed(&mut out, test, allowed);
    }
    let _ = writeln!(
        out,
        "#[test]\nfn covcon_violation_{}_{}_{}() {{",
        test.id,
        ident(m1),
        ident(m2)
    );
    out.push_str(
        "    let deadline = Instant::now() + Duration::from_secs(60);\n\
        \x20   let mut runs = 0u64;\n\
        \x20   while Instant::now() < deadline {\n\
        \x20       runs += 1;\n",
    );
    for (index, call) in test.instances.iter().enumerate() {
        let _ = writeln!(
            out,
            "        let i{index}: Arc<T> = {};",
            cx.construct(call)
        );
    }
    for call in &test.prefix {
        let _ = writeln!(out, "        let _ = {};", cx.invoke(call));
    }
    out.push_str(
        "        let ready = Arc::new(AtomicUsize::new(0));\n\
        \x20       let (done, finished) = std::sync::mpsc::channel::<()>();\n",
    );
    for (thread, calls) in test.threads.iter().enumerate() {
        let _ = writeln!(out, "        let t{thread} = {{");
        for index in 0..test.instances.len() {
            let _ = writeln!(out, "            let i{index} = Arc::clone(&i{index});");
        }
        out.push_str(
            "            let (ready, done) = (Arc::clone(&ready), done.clone());\n\
            \x20           std::thread::spawn(move || {\n\
            \x20               start_together(&ready);\n\
            \x20               let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {\n",
        );
        if allowed.is_some() {
            out.push_str("                    let mut seen: Vec<String> = Vec::new();\n");
        }
        for (index, call) in calls.iter().enumerate() {
            let place = (thread as u8, index as u32);
            if allowed.is_some_and(|a| a.calls.contains(&place)) {
                let _ = writeln!(
                    out,
                    "                    seen.push(clip(format!(\"{{:?}}\", {})));",
                    cx.invoke(call)
                );
            } else {
                let _ = writeln!(out, "                    let _ = {};", cx.invoke(call));
            }
        }
        if allowed.is_some() {
            out.push_str("                    seen\n");
        }
        out.push_str(
            "                }));\n\
            \x20               let _ = done.send(());\n\
            \x20               result\n\
            \x20           })\n\
            \x20       };\n",
        );
    }
    out.push_str(
        "        for _ in 0..2 {\n\
        \x20           if finished.recv_timeout(Duration::from_secs(10)).is_err() {\n\
        \x20               panic!(\"deadlock: the two threads did not finish within 10 s (run {runs})\");\n\
        \x20           }\n\
        \x20       }\n",
    );
    if allowed.is_some() {
        out.push_str("        let mut observed: Vec<String> = Vec::new();\n");
    }
    out.push_str(
        "        for thread in [t0, t1] {\n\
        \x20           match thread.join().expect(\"the thread's panic is caught\") {\n\
        \x20               std::result::Result::Err(panic) => {\n\
        \x20                   eprintln!(\"failed in run {runs}\");\n\
        \x20                   std::panic::resume_unwind(panic);\n\
        \x20               }\n",
    );
    out.push_str(if allowed.is_some() {
        "                std::result::Result::Ok(seen) => observed.extend(seen),\n"
    } else {
        "                std::result::Result::Ok(()) => {}\n"
    });
    out.push_str(
        "            }\n\
        \x20       }\n",
    );
    if let Some(allowed) = allowed {
        if allowed.final_state {
            out.push_str("        observed.push(clip(format!(\"{:?}\", &*i0)));\n");
        }
        out.push_str("        check_outcome(&observed, runs);\n");
    }
    out.push_str(
        "    }\n\
         }\n",
    );
    out
}

/// The allowed outcomes as constants, and the helpers that compare a run's texts with them.
fn render_allowed(out: &mut String, test: &TestCase, allowed: &AllowedOutcomes) {
    let mut places: Vec<String> = allowed
        .calls
        .iter()
        .map(|&(t, i)| {
            let method = test.threads[t as usize]
                .get(i as usize)
                .map_or("", |c| c.method.as_str());
            format!("thread {} call {} `{method}`", t + 1, i + 1)
        })
        .collect();
    if allowed.final_state {
        places.push("final state".to_string());
    }
    out.push_str("/// What is compared in each run, in this order.\nconst PLACES: &[&str] = &[\n");
    for place in &places {
        let _ = writeln!(out, "    {place:?},");
    }
    out.push_str("];\n\n");
    out.push_str(
        "/// The texts of [`PLACES`] in each outcome a sequential order of the same calls gives\n\
         /// (found by running every order twice on a fresh instance).\n",
    );
    if !allowed.left_out.is_empty() {
        out.push_str("/// Left out, because it is not a function of the calls:\n");
        for left_out in &allowed.left_out {
            let _ = writeln!(out, "/// - {}", left_out.to_string().replace('\n', " "));
        }
    }
    out.push_str("const ALLOWED: &[&[&str]] = &[\n");
    for outcome in &allowed.outcomes {
        let order: Vec<String> = outcome
            .order
            .iter()
            .map(|(t, i)| format!("t{}.{}", t + 1, i + 1))
            .collect();
        let _ = writeln!(out, "    // {}", order.join(" "));
        let texts: Vec<String> = outcome.texts.iter().map(|t| format!("{t:?}")).collect();
        let _ = writeln!(out, "    &[{}],", texts.join(", "));
    }
    out.push_str("];\n\n");
    out.push_str(
        "/// A `Debug` text cut to 2000 bytes, as cargo covcon's harness cuts it.\n\
         fn clip(mut text: String) -> String {\n\
        \x20   if text.len() > 2000 {\n\
        \x20       let mut end = 2000;\n\
        \x20       while !text.is_char_boundary(end) {\n\
        \x20           end -= 1;\n\
        \x20       }\n\
        \x20       text.truncate(end);\n\
        \x20       text.push('…');\n\
        \x20   }\n\
        \x20   text\n\
         }\n\n\
         /// Fails with the observed texts next to the closest allowed outcome's when `observed`\n\
         /// is none of [`ALLOWED`].\n\
         fn check_outcome(observed: &[String], runs: u64) {\n\
        \x20   let differing = |allowed: &[&str]| {\n\
        \x20       allowed.iter().zip(observed).filter(|(a, o)| **a != o.as_str()).count()\n\
        \x20   };\n\
        \x20   let Some(closest) = ALLOWED.iter().min_by_key(|a| differing(a)) else {\n\
        \x20       return;\n\
        \x20   };\n\
        \x20   if differing(closest) == 0 {\n\
        \x20       return;\n\
        \x20   }\n\
        \x20   let mut message = format!(\"wrong result in run {runs}: no sequential order of the same calls gives it\");\n\
        \x20   for ((place, seen), expected) in PLACES.iter().zip(observed).zip(closest.iter()) {\n\
        \x20       if seen != expected {\n\
        \x20           message.push_str(&format!(\"\\n  {place}: observed {seen}, closest allowed {expected}\"));\n\
        \x20       }\n\
        \x20   }\n\
        \x20   panic!(\"{message}\");\n\
         }\n\n",
    );
}

fn ident(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '_'
            }
        })
        .collect()
}

struct Render<'a> {
    ty: &'a TypeModel,
    instantiation: &'a BTreeMap<String, String>,
}

impl Render<'_> {
    fn construct(&self, call: &Call) -> String {
        let Some(constructor) = self.ty.constructors.iter().find(|c| c.name == call.method) else {
            return format!("Arc::new(T::{}())", call.method);
        };
        let mut args = call.args.iter();
        let mut take = |params: &[Param]| -> String {
            params
                .iter()
                .map(|p| match args.next() {
                    Some(value) => self.arg(value, &p.kind, &p.ty),
                    None => "Default::default()".to_string(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut expr = match constructor.kind {
            ConstructorKind::Default => "<T as Default>::default()".to_string(),
            _ => format!("<T>::{}({})", constructor.name, take(&constructor.params)),
        };
        for link in &constructor.chain {
            let _ = write!(expr, ".{}({})", link.name, take(&link.params));
        }
        match constructor.returns {
            ReturnShape::SelfValue => format!("Arc::new({expr})"),
            ReturnShape::ArcSelf => expr,
            ReturnShape::ResultSelf | ReturnShape::OptionSelf => {
                format!("Arc::new({expr}.unwrap())")
            }
        }
    }

    fn invoke(&self, call: &Call) -> String {
        let method = self.ty.methods.iter().find(|m| m.name == call.method);
        let args: Vec<String> = call
            .args
            .iter()
            .enumerate()
            .map(|(i, value)| match method.and_then(|m| m.params.get(i)) {
                Some(p) => self.arg(value, &p.kind, &p.ty),
                None => self.value(value, &ParamKind::Unsupported),
            })
            .collect();
        format!("i{}.{}({})", call.receiver, call.method, args.join(", "))
    }

    /// An argument for a parameter written `written`.
    fn arg(&self, value: &Value, kind: &ParamKind, written: &str) -> String {
        let written = written.trim();
        match kind {
            ParamKind::Instance { passing } => {
                let k = match value {
                    Value::Instance(k) => *k,
                    _ => 0,
                };
                match passing {
                    InstancePassing::Ref => format!("&*i{k}"),
                    InstancePassing::Arc => format!("Arc::clone(&i{k})"),
                    InstancePassing::Value => format!("(*i{k}).clone()"),
                }
            }
            ParamKind::Closure { returns } => {
                let inner = match value {
                    Value::Closure(inner) => inner.as_ref(),
                    other => other,
                };
                format!("move || {}", self.value(inner, returns))
            }
            // A literal is a `&'static str`: it fits `&str` and `&'static str` alike.
            ParamKind::Str => self.value(value, &ParamKind::Str),
            ParamKind::Slice { elem } => {
                format!(
                    "&{}[..]",
                    self.value(value, &ParamKind::Vec { elem: elem.clone() })
                )
            }
            ParamKind::Ref { inner } => format!("&{}", self.value(value, inner)),
            kind if written.starts_with('&') => format!("&{}", self.value(value, kind)),
            kind => self.value(value, kind),
        }
    }

    /// An owned value of `kind`, converted the way the harness's decoding converts it.
    fn value(&self, value: &Value, kind: &ParamKind) -> String {
        if let ParamKind::Generic { name } = kind {
            let concrete = self.instantiation.get(name).map_or("u32", String::as_str);
            return self.value(value, &concrete_kind(concrete));
        }
        match (value, kind) {
            (Value::Closure(inner), kind) => self.value(inner, kind),
            (Value::Int(n), ParamKind::Str) => format!("\"{n}\""),
            (Value::Str(s), ParamKind::Str) => format!("{s:?}"),
            (Value::Int(n), ParamKind::String) => format!("String::from(\"{n}\")"),
            (Value::Str(s), ParamKind::String | ParamKind::Unsupported) => {
                format!("String::from({s:?})")
            }
            (Value::Str(s), ParamKind::Vec { .. } | ParamKind::Slice { .. }) => {
                format!("{s:?}.as_bytes().to_vec()")
            }
            (Value::Int(n), ParamKind::Int { .. } | ParamKind::Unsupported) => n.to_string(),
            (Value::Int(n), ParamKind::Float { .. }) => format!("{n}.0"),
            (Value::Int(n), ParamKind::Bool) => (*n != 0).to_string(),
            (Value::Int(n), ParamKind::Duration) => {
                format!("Duration::from_micros({})", (*n).clamp(0, 1_000_000))
            }
            (Value::Duration(us), ParamKind::Int { .. }) => us.to_string(),
            (Value::Int(n), ParamKind::Vec { elem } | ParamKind::Slice { elem }) => {
                format!("vec![{}]", self.value(&Value::Int(*n), elem))
            }
            (Value::Bool(b), _) => b.to_string(),
            (Value::Char(c), _) => format!("{c:?}"),
            (Value::Float(f), _) => format!("{f:?}"),
            (Value::Str(s), _) => format!("{s:?}"),
            (Value::Duration(us), _) => format!("Duration::from_micros({us})"),
            (Value::List(items), kind) => {
                let elem = match kind {
                    ParamKind::Vec { elem } | ParamKind::Slice { elem } => elem.as_ref(),
                    _ => &ParamKind::Unsupported,
                };
                let items: Vec<String> = items.iter().map(|i| self.value(i, elem)).collect();
                format!("vec![{}]", items.join(", "))
            }
            (Value::Option(None), _) => "None".to_string(),
            (Value::Option(Some(inner)), kind) => {
                let inner_kind = match kind {
                    ParamKind::Option { inner } => inner.as_ref(),
                    _ => &ParamKind::Unsupported,
                };
                format!("Some({})", self.value(inner, inner_kind))
            }
            (Value::Tuple(items), kind) => {
                let kinds: &[ParamKind] = match kind {
                    ParamKind::Tuple { elems } => elems,
                    _ => &[],
                };
                let items: Vec<String> = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| self.value(v, kinds.get(i).unwrap_or(&ParamKind::Unsupported)))
                    .collect();
                if items.len() == 1 {
                    format!("({},)", items[0])
                } else {
                    format!("({})", items.join(", "))
                }
            }
            (Value::Instance(k), _) => format!("Arc::clone(&i{k})"),
            (Value::Int(n), _) => n.to_string(),
        }
    }
}

/// The parameter kind of a concrete type the harness instantiates generics with.
fn concrete_kind(ty: &str) -> ParamKind {
    match ty {
        "String" => ParamKind::String,
        "Vec<u8>" => ParamKind::Vec {
            elem: Box::new(ParamKind::Int {
                signed: false,
                bits: 8,
            }),
        },
        "bool" => ParamKind::Bool,
        "char" => ParamKind::Char,
        _ => ParamKind::Int {
            signed: false,
            bits: 32,
        },
    }
}
