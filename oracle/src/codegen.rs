//! Source of the generated harness crate: its manifest, `main.rs` and one driver module per
//! type (`src/t<N>.rs`), each a [`covcon_rt::Driver`] with a dispatch table of constructors and
//! methods that decodes arguments from the test case's JSON values.
//!
//! Everything here is pure text generation. Each dispatch entry is remembered with its file
//! and line range ([`Entry`]), so that a rustc error can be mapped back to the constructor or
//! method whose generated call does not compile, which `build.rs` then drops.

use analysis::{
    Constructor, ConstructorKind, GenericKind, GenericParam, GuardHolder, InstancePassing, Param,
    ParamKind, ReturnShape, ScopeGuard, TypeModel, Via, PATH_BUF,
};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

/// One type as it goes into the harness.
#[derive(Debug, Clone)]
pub(crate) struct TypePlan<'a> {
    pub(crate) model: &'a TypeModel,
    /// Concrete argument for each generic parameter, in declaration order (empty when the type
    /// is not generic).
    pub(crate) generic_args: Vec<String>,
    /// The path the type is named by, when not the model's (`k::Type` for `k::private::Type`
    /// re-exported at the root).
    pub(crate) path: Option<String>,
    /// Constructors and methods left out (they did not compile or cannot be driven).
    pub(crate) skip_constructors: BTreeSet<String>,
    pub(crate) skip_methods: BTreeSet<String>,
    /// Constructors of value types left out: (value type path, constructor).
    pub(crate) skip_values: BTreeSet<(String, String)>,
    /// Methods whose returned values are not passed along ([`plain_flow`]).
    pub(crate) plain_flows: BTreeSet<String>,
    /// Methods whose calls the harness stamps (start and end), since no guard is in their
    /// body in the copy.
    pub(crate) stamp_methods: BTreeSet<String>,
}

/// What a line range of a generated file belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    /// The type-level part of driver `t<N>`: errors there mean the type cannot be driven
    /// with this instantiation.
    Type(usize),
    Constructor(usize, String),
    Method(usize, String),
    /// The arm keeping a handle from the named method: errors there drop the handle methods
    /// that come from it.
    Handle(usize, String),
    /// A constructor of a value type: (plan, value type path, constructor).
    Value(usize, String, String),
}

/// A dispatch entry's place in the generated sources.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    /// Relative to the harness directory (`src/t0.rs`).
    pub(crate) file: String,
    /// 1-based, inclusive.
    pub(crate) lines: (u32, u32),
    pub(crate) target: Target,
}

/// The generated harness: files relative to the harness directory, and the entries.
#[derive(Debug, Clone, Default)]
pub(crate) struct Generated {
    pub(crate) files: BTreeMap<String, String>,
    pub(crate) entries: Vec<Entry>,
}

/// Absolute paths the dispatch arms use, immune to the arms' glob imports.
const OK: &str = "::std::result::Result::Ok";
const ERR: &str = "::std::result::Result::Err";
const SOME: &str = "::std::option::Option::Some";
const NONE: &str = "::std::option::Option::None";
const ARC: &str = "::std::sync::Arc";
const CALL_ERROR: &str = "::covcon_rt::CallError::new";
const RESULT: &str = "::std::result::Result";

/// How many items a test takes from an iterator a method returns (`analysis::Method::iterates`):
/// enough for the few entries a test's prefix makes, and a bound on one that never ends. The
/// harness drives it with `covcon_rt::drive`, a reproducer with `.take(DRIVE_LIMIT).count()`.
pub(crate) const DRIVE_LIMIT: usize = 64;

/// Name of the harness package and binary.
pub(crate) const HARNESS_NAME: &str = "covcon-harness";

/// Dependency of the harness on one analysed package.
#[derive(Debug, Clone)]
pub(crate) struct PackageDep {
    pub(crate) name: String,
    pub(crate) dir: std::path::PathBuf,
    pub(crate) features: Vec<String>,
    pub(crate) default_features: bool,
}

/// A dependency of a package under test that the generated code names (`::dashmap::DashMap`
/// in a generic argument, a trait of another crate), pinned to the version the package uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExternDep {
    /// The crate name the code uses.
    pub(crate) name: String,
    pub(crate) package: String,
    pub(crate) version: String,
    pub(crate) path: Option<std::path::PathBuf>,
}

/// The crates a generated source names by absolute path (`::dashmap::` in
/// `::dashmap::DashMap<u32, u32>`), besides `std`, `core`, `alloc` and covcon's runtime.
pub(crate) fn extern_crates(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while let Some(at) = text[i..].find("::") {
        let start = i + at;
        let before = start.checked_sub(1).map(|b| bytes[b] as char);
        let leading = before.is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '>'));
        let rest = &text[start + 2..];
        let name: String = rest
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let external = !matches!(name.as_str(), "std" | "core" | "alloc" | "covcon_rt");
        if leading && external && !name.is_empty() && rest[name.len()..].starts_with("::") {
            out.insert(name);
        }
        i = start + 2;
    }
    out
}

/// The harness crate's `Cargo.toml`.
pub(crate) fn manifest(
    packages: &[PackageDep],
    externs: &[ExternDep],
    runtime_dir: &Path,
) -> String {
    let mut out = String::new();
    out.push_str(
        "# Generated by cargo covcon: do not edit.\n\
         [package]\n\
         name = \"covcon-harness\"\n\
         version = \"0.0.0\"\n\
         edition = \"2021\"\n\
         publish = false\n\n\
         [package.metadata]\n\
         cargo-covcon = true\n\n\
         [[bin]]\n\
         name = \"covcon-harness\"\n\
         path = \"src/main.rs\"\n\
         test = false\n\
         doc = false\n\
         bench = false\n\n\
         [dependencies]\n",
    );
    let _ = writeln!(
        out,
        "covcon-rt = {{ path = {} }}",
        toml_str(&runtime_dir.display().to_string())
    );
    for package in packages {
        let _ = write!(
            out,
            "{} = {{ path = {}",
            toml_key(&package.name),
            toml_str(&package.dir.display().to_string())
        );
        if !package.default_features {
            out.push_str(", default-features = false");
        }
        if !package.features.is_empty() {
            let features: Vec<String> = package.features.iter().map(|f| toml_str(f)).collect();
            let _ = write!(out, ", features = [{}]", features.join(", "));
        }
        out.push_str(" }\n");
    }
    for dep in externs {
        let _ = write!(
            out,
            "{} = {{ package = {}",
            toml_key(&dep.name),
            toml_str(&dep.package)
        );
        match &dep.path {
            Some(path) => {
                let _ = write!(out, ", path = {}", toml_str(&path.display().to_string()));
            }
            None => {
                let _ = write!(
                    out,
                    ", version = {}",
                    toml_str(&format!("={}", dep.version))
                );
            }
        }
        out.push_str(", default-features = false }\n");
    }
    out.push_str(
        "\n# An empty workspace, so the harness never joins the user's.\n\
         [workspace]\n\n\
         [profile.release]\n\
         debug-assertions = true\n\
         overflow-checks = true\n\
         panic = \"unwind\"\n\
         debug = \"line-tables-only\"\n\
         incremental = true\n",
    );
    out
}

fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

fn toml_key(s: &str) -> String {
    if s.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    {
        s.to_string()
    } else {
        toml_str(s)
    }
}

/// `main.rs` and the driver modules.
pub(crate) fn harness(plans: &[TypePlan<'_>]) -> Generated {
    let mut generated = Generated::default();
    let mut main = String::from(
        "//! Generated by cargo covcon: the harness worker for the types under test.\n\
         #![allow(unused, clippy::all, non_snake_case)]\n\n\
         // A `no_std` crate's paths (`::alloc::sync::Arc` in a turbofish) resolve here too.\n\
         extern crate alloc;\n\n",
    );
    for index in 0..plans.len() {
        let _ = writeln!(main, "mod t{index};");
    }
    for index in 0..plans.len() {
        let _ = writeln!(main, "static T{index}: t{index}::D = t{index}::D;");
    }
    main.push_str("\nfn main() {\n    covcon_rt::worker_main(vec![");
    let drivers: Vec<String> = (0..plans.len()).map(|i| format!("&T{i}")).collect();
    main.push_str(&drivers.join(", "));
    main.push_str("]);\n}\n");
    generated.files.insert("src/main.rs".to_string(), main);
    for (index, plan) in plans.iter().enumerate() {
        let file = format!("src/t{index}.rs");
        let mut writer = Writer::default();
        driver(&mut writer, index, plan);
        generated
            .entries
            .extend(writer.entries.into_iter().map(|(lines, target)| Entry {
                file: file.clone(),
                lines,
                target,
            }));
        generated.files.insert(file, writer.text);
    }
    generated
}

/// Text with a line count, and the entries written so far.
#[derive(Default)]
struct Writer {
    text: String,
    line: u32,
    entries: Vec<((u32, u32), Target)>,
}

impl Writer {
    fn line(&mut self, s: &str) {
        self.text.push_str(s);
        self.text.push('\n');
        self.line += 1;
    }
    /// The line the next `line` call writes (1-based).
    fn next_line(&self) -> u32 {
        self.line + 1
    }
}

/// The concrete Rust type of the plan's type (`::k::m::Cache<u32, u32>`).
pub(crate) fn concrete_type(plan: &TypePlan<'_>) -> String {
    let path = format!("::{}", type_path(plan));
    if plan.generic_args.is_empty() {
        path
    } else {
        format!("{path}<{}>", plan.generic_args.join(", "))
    }
}

/// The path the plan names its type by.
pub(crate) fn type_path<'p>(plan: &'p TypePlan<'_>) -> &'p str {
    plan.path.as_deref().unwrap_or(&plan.model.path)
}

/// The generic parameters' names, in order (`'a`, `K`, `N`).
pub(crate) fn generic_names(generics: &[GenericParam]) -> Vec<String> {
    generics.iter().map(|g| g.name.clone()).collect()
}

/// Type arguments covcon tries for a type parameter with no default and no candidate of its
/// own, in turn.
pub(crate) const CANDIDATES: [&str; 4] = ["u32", "i64", "String", "Vec<u8>"];

/// How many instantiations there are to try: the longest candidate list of a type parameter
/// (one more for a unit default, tried last).
pub(crate) fn attempts(generics: &[GenericParam]) -> usize {
    generics
        .iter()
        .filter(|g| g.kind == GenericKind::Type && g.informative_default().is_none())
        .map(|g| type_candidates(g).len())
        .max()
        .unwrap_or(1)
}

/// The type arguments to try for a type parameter with no informative default, in turn: its
/// own candidates, then covcon's, then a unit default. For a parameter the crate may keep in
/// memory it manages itself (`GenericParam::boxed`), a first candidate that is a primitive
/// integer is tried boxed before it (`Box<i32>`, then `i32`): values it reads twice are then
/// freed twice, a crash, and its answers print as the integer's.
fn type_candidates(g: &GenericParam) -> Vec<String> {
    let mut all: Vec<String> = g
        .candidates
        .iter()
        .map(String::as_str)
        .chain(CANDIDATES)
        .chain(g.default.as_deref())
        .map(str::to_string)
        .collect();
    if boxes_first(g) {
        all.insert(0, format!("Box<{}>", all[0]));
    }
    all
}

/// Whether [`type_candidates`] tries a boxed integer first for `g`: it is marked `boxed` and
/// its first candidate is a primitive integer.
fn boxes_first(g: &GenericParam) -> bool {
    let first = g.candidates.first().map_or(CANDIDATES[0], String::as_str);
    g.boxed && PRIMITIVE_INTEGERS.contains(&first)
}

/// Whether the `attempt`th instantiation gives some type parameter a boxed integer
/// ([`type_candidates`]).
pub(crate) fn boxed_attempt(generics: &[GenericParam], attempt: usize) -> bool {
    attempt == 0
        && generics.iter().any(|g| {
            g.kind == GenericKind::Type && g.informative_default().is_none() && boxes_first(g)
        })
}

/// The integer types a boxed first candidate may box.
const PRIMITIVE_INTEGERS: [&str; 12] = [
    "u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64", "isize", "u128", "i128",
];

/// The argument for each generic parameter in the `attempt`th instantiation: `'static` for
/// lifetimes, a small constant for const generics, the default where there is one (with the
/// other parameters' arguments put in, for `C = fn() -> M`), else the parameter's own
/// candidates, then covcon's.
pub(crate) fn instantiate(generics: &[GenericParam], attempt: usize) -> Vec<String> {
    let mut args: Vec<String> = generics
        .iter()
        .map(|g| match g.kind {
            GenericKind::Lifetime => "'static".to_string(),
            GenericKind::Const => g.default.clone().unwrap_or_else(|| {
                if g.written.contains("bool") {
                    "false".to_string()
                } else if g.written.contains("char") {
                    "'a'".to_string()
                } else {
                    "4".to_string()
                }
            }),
            GenericKind::Type => match g.informative_default() {
                Some(default) => default.clone(),
                None => {
                    let all = type_candidates(g);
                    all[attempt.min(all.len() - 1)].clone()
                }
            },
        })
        .collect();
    // Defaults may name the other parameters.
    let names = generic_names(generics);
    let map: BTreeMap<String, String> = names
        .iter()
        .cloned()
        .zip(args.iter().cloned())
        .filter(|(n, _)| !n.starts_with('\''))
        .collect();
    for (g, arg) in generics.iter().zip(args.iter_mut()) {
        if g.informative_default().is_some() {
            *arg = substitute(arg, &map);
        }
    }
    args
}

/// `text` with every identifier that is a key of `map` replaced by its value.
pub(crate) fn substitute(text: &str, map: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = String::new();
    let mut prev: Option<char> = None;
    let flush = |word: &mut String, out: &mut String, prev_colon: bool| {
        if !word.is_empty() {
            match map.get(word.as_str()) {
                Some(v) if !prev_colon => out.push_str(v),
                _ => out.push_str(word),
            }
            word.clear();
        }
    };
    let mut word_after_colon = false;
    for c in text.chars() {
        if c.is_alphanumeric() || c == '_' {
            if word.is_empty() {
                word_after_colon = prev == Some(':');
            }
            word.push(c);
        } else {
            flush(&mut word, &mut out, word_after_colon);
            out.push(c);
        }
        prev = Some(c);
    }
    flush(&mut word, &mut out, word_after_colon);
    out
}

/// Driver `t<index>` of `plan`'s type: its `construct`, `invoke` and `handle` dispatch tables,
/// then its value builders.
fn driver(w: &mut Writer, index: usize, plan: &TypePlan<'_>) {
    let ty = plan.model;
    let concrete = concrete_type(plan);
    let substitutions = substitutions(plan);
    let values = ValueNames::of(ty);
    // Every arm imports the crate root and the type's module, so trait methods resolve;
    // arms name everything else by absolute path, since these globs may shadow the prelude
    // (`Result` aliases are common).
    let globs = globs_of(type_path(plan));
    driver_head(w, index, plan, &concrete);
    let args_cx = ArgsCx {
        substitutions: &substitutions,
        values: &values,
        source: Source::Call,
        confined: ty.confined,
        plain_flows: &plan.plain_flows,
    };
    for constructor in &ty.constructors {
        if !constructor.supported() || plan.skip_constructors.contains(&constructor.name) {
            continue;
        }
        constructor_arm(w, index, plan, &globs, &args_cx, constructor);
    }
    let middle = w.next_line();
    w.line("            other => Err(CallError::new(format!(\"no constructor `{other}`\"))),");
    w.line("        }");
    w.line("    }");
    w.line(
        "    fn invoke(&self, call: &Call, cx: &Cx<'_, CovconInstance>) -> Result<Option<String>, CallError> {",
    );
    w.line("        match call.method.as_str() {");
    w.entries.push(((middle, w.line), Target::Type(index)));
    let mut seen = BTreeSet::new();
    for method in &ty.methods {
        if !method.supported()
            || plan.skip_methods.contains(&method.name)
            || !seen.insert(method.name.clone())
        {
            continue;
        }
        method_arm(w, index, plan, &globs, &args_cx, method);
    }
    let end = w.next_line();
    w.line("            other => Err(CallError::new(format!(\"no method `{other}`\"))),");
    w.line("        }");
    w.line("    }");
    w.entries.push(((end, w.line), Target::Type(index)));
    handle_fn(w, index, plan, &globs, &args_cx);
    let end = w.next_line();
    w.line("}");
    w.entries.push(((end, w.line), Target::Type(index)));
    value_builders(w, index, plan, &values, &substitutions, &globs);
}

/// The driver's module head, up to the `match` of its `construct`: the types it names and the
/// methods that need no arm.
fn driver_head(w: &mut Writer, index: usize, plan: &TypePlan<'_>, concrete: &str) {
    let ty = plan.model;
    let type_start = w.next_line();
    w.line(&format!(
        "//! Driver for `{}` (generated by cargo covcon).",
        ty.path
    ));
    w.line("use covcon_rt::{Call, CallError, Cx};");
    w.line("use std::sync::Arc;");
    w.line(&format!("type CovconSelf = {concrete};"));
    // A type that cannot be shared is kept so only the thread that built it uses it.
    if ty.confined {
        w.line("type CovconInstance = ::covcon_rt::Confined<CovconSelf>;");
    } else {
        w.line("type CovconInstance = CovconSelf;");
    }
    w.line("pub struct D;");
    w.line("impl covcon_rt::Driver for D {");
    w.line("    type Instance = CovconInstance;");
    w.line(&format!(
        "    fn type_path(&self) -> &'static str {{ {:?} }}",
        ty.path
    ));
    w.line(
        "    fn state(&self, instance: &CovconInstance) -> Option<String> { covcon_rt::state_text!(*instance) }",
    );
    if takes_paths(ty) {
        w.line("    fn fresh_dir(&self) -> bool { true }");
    }
    w.line("    fn construct(&self, call: &Call, cx: &Cx<'_, CovconInstance>) -> Result<::covcon_rt::Constructed<CovconInstance>, CallError> {");
    w.line("        match call.method.as_str() {");
    w.entries.push(((type_start, w.line), Target::Type(index)));
}

/// One arm of the driver's `construct`: the constructor's call, the instance as the driver
/// keeps it, and the other elements of a tuple it returns.
fn constructor_arm(
    w: &mut Writer,
    index: usize,
    plan: &TypePlan<'_>,
    globs: &str,
    args_cx: &ArgsCx<'_>,
    constructor: &Constructor,
) {
    let ty = plan.model;
    let start = w.next_line();
    w.line(&format!("            {:?} => {{", constructor.name));
    w.line(globs);
    let built = construction(constructor, "CovconSelf", args_cx, w, "                ");
    w.line(&format!("                let built = {built};"));
    // The other elements of a tuple, kept for the test's `#k` handles.
    let elements = match &constructor.tuple {
        Some(tuple) => {
            let names: Vec<String> = (0..tuple.elements.len()).map(|k| format!("e{k}")).collect();
            w.line(&format!(
                "                let ({},) = built;",
                names.join(", ")
            ));
            w.line(&format!("                let built = e{};", tuple.index));
            let kept: Vec<String> = (0..tuple.elements.len())
                .map(|k| {
                    if k == tuple.index {
                        NONE.to_string()
                    } else {
                        format!("{SOME}(::std::boxed::Box::new(e{k}) as ::covcon_rt::Handle)")
                    }
                })
                .collect();
            format!("::std::vec![{}]", kept.join(", "))
        }
        None => "::std::vec::Vec::new()".to_string(),
    };
    // The instance as the driver keeps it.
    let kept = |value: &str| {
        if ty.confined {
            format!("{ARC}::new(::covcon_rt::Confined::new({value}))")
        } else {
            format!("{ARC}::new({value})")
        }
    };
    let built_kept = kept("built");
    match constructor.returns {
        ReturnShape::SelfValue => {
            w.line(&format!("                {OK}(({built_kept}, {elements}))"))
        }
        ReturnShape::RefClone | ReturnShape::Guard => w.line(&format!(
            "                {OK}(({}, {elements}))",
            kept("::std::clone::Clone::clone(built)")
        )),
        ReturnShape::ArcSelf => w.line(&format!("                {OK}((built, {elements}))")),
        shape @ (ReturnShape::ResultSelf | ReturnShape::OptionSelf) => unwrapped(
            w,
            "built",
            shape,
            &constructor.name,
            &format!("{OK}(({built_kept}, {elements})),"),
        ),
    }
    w.line("            }");
    w.entries.push((
        (start, w.line),
        Target::Constructor(index, constructor.name.clone()),
    ));
}

/// Writes a `match` on `value`, the `Option` or `Result` (`shape`, [`ReturnShape::OptionSelf`]
/// or [`ReturnShape::ResultSelf`]) that `name` returned: what it holds, bound to the same name,
/// goes to arm `then` (with its comma, if it needs one); `None` or `Err` is the call's error.
fn unwrapped(w: &mut Writer, value: &str, shape: ReturnShape, name: &str, then: &str) {
    let (holds, failure) = match shape {
        ReturnShape::OptionSelf => (
            SOME,
            format!("{NONE} => {ERR}({CALL_ERROR}(\"`{name}` returned None\")),"),
        ),
        _ => (
            OK,
            format!(
                "{ERR}(e) => {ERR}({CALL_ERROR}(::std::format!(\"`{name}` returned Err({{}})\", ::covcon_rt::debug_text!(e).unwrap_or_default()))),"
            ),
        ),
    };
    w.line(&format!("                match {value} {{"));
    w.line(&format!("                    {holds}({value}) => {then}"));
    w.line(&format!("                    {failure}"));
    w.line("                }");
}

/// One arm of the driver's `invoke`: the call of `method` (on a handle, if it is one's) and
/// the text it answers.
fn method_arm(
    w: &mut Writer,
    index: usize,
    plan: &TypePlan<'_>,
    globs: &str,
    args_cx: &ArgsCx<'_>,
    method: &analysis::Method,
) {
    let ty = plan.model;
    let start = w.next_line();
    w.line(&format!("            {:?} => {{", method.name));
    w.line(globs);
    if let Some(via) = &method.via {
        w.line(&globs_of(&via.ty));
    }
    if let Some(tr) = &method.trait_name {
        w.line(&format!(
            "                #[allow(unused_imports)] use ::{tr} as _;"
        ));
    }
    // A closure with arguments answers what it saw of them (`covcon_rt::seen_start`).
    let sees = method.shows_closure_arguments();
    let call_expr = method_call(w, plan, args_cx, method, sees);
    if method.iterates {
        // The iterator is driven in the same step, as its caller would; its items are no
        // answer to compare (an iterator over a concurrent structure need not be a
        // snapshot).
        w.line(&format!(
            "                ::covcon_rt::drive({}, {DRIVE_LIMIT});",
            awaited(&call_expr, method.is_async)
        ));
        w.line(&format!("                {OK}({NONE})"));
    } else {
        w.line(&format!(
            "                let r = {};",
            awaited(&call_expr, method.is_async)
        ));
        method_scope(w, index, plan, args_cx, method);
        // A guard's handle is only reached through it: the guard's text is the answer.
        let handed_out = ty
            .hands_out(&method.name)
            .map(|h| h.shape)
            .filter(|shape| *shape != ReturnShape::Guard);
        match handed_out {
            Some(shape) => w.line(&format!("                {OK}({})", handle_text(shape))),
            None if sees => w.line(&format!(
                "                {OK}(::covcon_rt::seen_end(::covcon_rt::result_text!(r)))"
            )),
            None => w.line(&format!(
                "                {OK}(::covcon_rt::result_text!(r))"
            )),
        }
    }
    w.line("            }");
    w.entries
        .push(((start, w.line), Target::Method(index, method.name.clone())));
}

/// The expression that calls `method`, after the statements that come before it in its arm
/// (which are written to `w`): its arguments' `let`s, and its stamp when its body has no
/// guard. `sees`: the call answers what its closure saw.
fn method_call(
    w: &mut Writer,
    plan: &TypePlan<'_>,
    args_cx: &ArgsCx<'_>,
    method: &analysis::Method,
    sees: bool,
) -> String {
    let ty = plan.model;
    let substitutions = args_cx.substitutions;
    let mut next_arg = 0;
    // A handle behind a guard is called on a fresh call of the method that hands it out,
    // in one expression: that method's arguments come first.
    let guarded_from = method
        .via
        .as_ref()
        .filter(|v| v.shape == ReturnShape::Guard)
        .and_then(|v| ty.own_method(&v.from));
    let mut lets = Vec::new();
    // The call the handle comes from, in one expression, when it is behind a guard.
    let from_call = guarded_from.map(|from| {
        let (more, args) = arguments(&from.params, &mut next_arg, args_cx);
        lets.extend(more);
        let call = format!(
            "cx.receiver(call)?.{}{}({})",
            from.name,
            turbofish(&from.generic_args, substitutions),
            args.join(", ")
        );
        awaited(&call, from.is_async)
    });
    let (more, args) = arguments(&method.params, &mut next_arg, args_cx);
    lets.extend(more);
    if sees {
        w.line("                ::covcon_rt::seen_start();");
    }
    for line in lets {
        w.line(&format!("                {line}"));
    }
    if plan.stamp_methods.contains(&method.name) {
        // No guard inside its body (a trait's default method, one a macro wrote, a
        // `const fn`, a body the guard did not compile in): the call is stamped here, so
        // its pairs can still be covered.
        w.line(&format!(
            "                let __covcon_guard = ::covcon_rt::enter({:?}, {:?});",
            ty.path, method.name
        ));
        // Nothing inside it is a schedule point: without one here, two threads that share a
        // core (two workers on two cores) run their calls back to back and never meet.
        w.line("                ::covcon_rt::schedule_point();");
    }
    let (receiver, name) = match (&method.via, method.handle_parts(), from_call) {
        (Some(_), Some((_, own)), Some(from_call)) => (from_call, own),
        (Some(via), Some((_, own)), None) => (
            format!("cx.handle::<{}>(call)?", handle_type(via, substitutions)),
            own,
        ),
        _ => ("cx.receiver(call)?".to_string(), method.name.as_str()),
    };
    format!(
        "{receiver}.{}{}({})",
        name,
        turbofish(&method.generic_args, substitutions),
        args.join(", ")
    )
}

/// The scope code of `method`'s arm ([`scope_arm`]) when the method hands out a scope guard
/// the plan keeps, as an entry of its own.
fn method_scope(
    w: &mut Writer,
    index: usize,
    plan: &TypePlan<'_>,
    args_cx: &ArgsCx<'_>,
    method: &analysis::Method,
) {
    let scope = plan.model.scopes.iter().find(|s| {
        s.from == method.name
            && method.via.is_none()
            && !method.is_async
            && !plan.skip_methods.contains(&scope_key(&s.from))
    });
    if let Some(scope) = scope {
        let scope_start = w.next_line();
        scope_arm(w, scope, args_cx);
        // Before the method's own entry, so an error in the scope's code drops the
        // scope alone (the first entry holding an error's line wins).
        w.entries.push((
            (scope_start, w.line),
            Target::Method(index, scope_key(&method.name)),
        ));
    }
}

/// The result text of a call that hands out a handle `r` (of `shape`) and does not keep it:
/// the variant and an error's text, not the handle's `Debug`. A handle shares the object's
/// state, and formatting it after the call reads that state while the other thread changes
/// it: sled's `Debug` of a `Tree` the other thread had just dropped panicked, and covcon
/// reported `drop_tree ∥ open_tree`, a race between its own formatting and the other call.
/// The results oracle does not compare these answers (`ResultsConfig::handing_out`).
fn handle_text(shape: ReturnShape) -> String {
    let text = |t: &str| format!("{SOME}(::std::string::String::from({t:?}))");
    match shape {
        ReturnShape::OptionSelf => format!(
            "if r.is_some() {{ {} }} else {{ {} }}",
            text("Some(..)"),
            text("None")
        ),
        ReturnShape::ResultSelf => format!(
            "match &r {{ {OK}(_) => {}, {ERR}(e) => {SOME}(::std::format!(\"Err({{}})\", \
             ::covcon_rt::debug_text!(e).unwrap_or_default())) }}",
            text("Ok(..)")
        ),
        _ => NONE.to_string(),
    }
}

/// The rest of a method's arm when the method hands out a scope guard and the call has a
/// scope (`generator::Call::scope`): the guard `r` lives while the scope's calls are made on
/// this driver, then it is taken out of the result and handed to the finishing call, whose
/// arguments are decoded from that call (`call` is rebound to it). A result that holds no
/// guard (`None`, `Err`, another variant) ends the scope with a result text saying so.
fn scope_arm(w: &mut Writer, scope: &ScopeGuard, args_cx: &ArgsCx<'_>) {
    w.line(&format!(
        "                if let {SOME}(scope) = call.scope.as_deref() {{"
    ));
    // Dropped last, after the guard: the run is inside it while the guard lives.
    w.line(&format!(
        "                    let __covcon_held = ::covcon_rt::enter(::covcon_rt::SCOPE_HELD, {:?});",
        scope.from
    ));
    w.line("                    for then in &scope.then {");
    w.line("                        let _ = self.invoke(then, cx)?;");
    w.line("                    }");
    w.line(&format!(
        "                    let {SOME}(call) = scope.finish.as_ref() else {{ return {OK}({NONE}) }};"
    ));
    let no_guard = format!("return {OK}({SOME}(::std::string::String::from({SCOPE_NO_GUARD:?})))");
    match &scope.holds {
        GuardHolder::Plain => w.line("                    #[allow(unused_mut)] let mut g = r;"),
        GuardHolder::Option => w.line(&format!(
            "                    #[allow(unused_mut)] let {SOME}(mut g) = r else {{ {no_guard} }};"
        )),
        GuardHolder::Result => w.line(&format!(
            "                    #[allow(unused_mut)] let {OK}(mut g) = r else {{ {no_guard} }};"
        )),
        GuardHolder::Variant(path) => w.line(&format!(
            "                    #[allow(unused_mut, irrefutable_let_patterns)] let {path}(mut g) = r else {{ {no_guard} }};"
        )),
    }
    w.line("                    return match call.method.as_str() {");
    for finisher in &scope.finishers {
        let m = &finisher.method;
        w.line(&format!("                        {:?} => {{", m.name));
        let mut next_arg = 0;
        let (lets, args) = arguments(&m.params, &mut next_arg, args_cx);
        for line in lets {
            w.line(&format!("                            {line}"));
        }
        w.line(&format!(
            "                            let f = g.{}({});",
            m.name,
            args.join(", ")
        ));
        w.line(&format!(
            "                            {OK}(::covcon_rt::result_text!(f))"
        ));
        w.line("                        }");
    }
    w.line(&format!(
        "                        other => {ERR}(CallError::new(format!(\"no method `{{other}}` of the guard\"))),"
    ));
    w.line("                    };");
    w.line("                }");
}

/// How the harness's skip list names the scope code of method `from`: a name no method has,
/// so an error there drops the scope and leaves the method.
pub(crate) fn scope_key(from: &str) -> String {
    format!("{from} (scope)")
}

/// The result text of a scope whose call returned no guard (`None`, `Err`, another variant):
/// the scope's calls were made, its finishing call was not.
const SCOPE_NO_GUARD: &str = "(no guard to finish)";

/// A call's expression, its future run to completion for an `async fn`.
fn awaited(call: &str, is_async: bool) -> String {
    if is_async {
        format!("::covcon_rt::block_on({call})")
    } else {
        call.to_string()
    }
}

/// The type a handle is kept as: what its method returns, `Option` and `Result` unwrapped.
fn handle_type(via: &Via, substitutions: &BTreeMap<String, String>) -> String {
    match &via.kept {
        Some(kept) => substitute(kept, substitutions),
        None => kept_type(&via.ty, via.shape),
    }
}

fn kept_type(ty: &str, shape: ReturnShape) -> String {
    match shape {
        ReturnShape::ArcSelf => format!("{ARC}<::{ty}>"),
        _ => format!("::{ty}"),
    }
}

/// The imports of a handle type's arms: its crate root and module, so its trait methods
/// resolve.
fn globs_of(type_path: &str) -> String {
    let uses: Vec<String> = glob_modules(type_path)
        .iter()
        .map(|m| format!("use ::{m}::*;"))
        .collect();
    format!(
        "                #[allow(unused_imports)] {}",
        uses.join(" ")
    )
}

/// The driver's `handle`: one arm per method of the type whose result a test keeps as a
/// handle (the `from` of a handle method the plan still calls), unwrapping `Option` and
/// `Result`. Nothing is written when the type hands out no handles.
fn handle_fn(w: &mut Writer, index: usize, plan: &TypePlan<'_>, globs: &str, args_cx: &ArgsCx<'_>) {
    let ty = plan.model;
    // Each method a kept value comes from, with the type it is kept as and how it returns it.
    let mut froms: Vec<(&analysis::Method, String, ReturnShape)> = Vec::new();
    for m in ty
        .methods
        .iter()
        .filter(|m| m.supported() && !plan.skip_methods.contains(&m.name))
    {
        let mut wanted: Vec<(&str, String, ReturnShape)> = Vec::new();
        // A guard is never kept: its handle's methods are called through it.
        if let Some(via) = m.via.as_ref().filter(|v| v.shape != ReturnShape::Guard) {
            wanted.push((
                &via.from,
                handle_type(via, args_cx.substitutions),
                via.shape,
            ));
        }
        for p in &m.params {
            if plain_flow(&p.kind, args_cx.plain_flows).is_some() {
                continue;
            }
            if let ParamKind::Returned {
                from,
                ty: kept,
                shape,
                ..
            } = &p.kind
            {
                wanted.push((from, substitute(kept, args_cx.substitutions), *shape));
            }
        }
        for (from_name, kept, shape) in wanted {
            if froms.iter().any(|(f, _, _)| f.name == from_name) {
                continue;
            }
            if let Some(from) = ty.own_method(from_name) {
                froms.push((from, kept, shape));
            }
        }
    }
    // Elements of the constructor's tuple the handle methods come from (`#1`).
    let mut elements: Vec<usize> = ty
        .methods
        .iter()
        .filter(|m| m.supported() && !plan.skip_methods.contains(&m.name))
        .filter_map(|m| m.via.as_ref()?.tuple_element())
        .collect();
    elements.sort();
    elements.dedup();
    if froms.is_empty() && elements.is_empty() {
        return;
    }
    let head = w.next_line();
    w.line(
        "    fn handle(&self, call: &Call, cx: &Cx<'_, CovconInstance>) -> Result<::covcon_rt::Handle, CallError> {",
    );
    w.line("        match call.method.as_str() {");
    for k in elements {
        w.line(&format!(
            "            \"#{k}\" => cx.take_element(call, {k}),"
        ));
    }
    w.entries.push(((head, w.line), Target::Type(index)));
    for (from, kept, shape) in froms {
        let start = w.next_line();
        w.line(&format!("            {:?} => {{", from.name));
        w.line(globs);
        if let Some(tr) = &from.trait_name {
            w.line(&format!(
                "                #[allow(unused_imports)] use ::{tr} as _;"
            ));
        }
        let mut next_arg = 0;
        let (lets, args) = arguments(&from.params, &mut next_arg, args_cx);
        for line in lets {
            w.line(&format!("                {line}"));
        }
        let call_expr = format!(
            "cx.receiver(call)?.{}{}({})",
            from.name,
            turbofish(&from.generic_args, args_cx.substitutions),
            args.join(", ")
        );
        w.line(&format!(
            "                let r = {};",
            awaited(&call_expr, from.is_async)
        ));
        match shape {
            ReturnShape::SelfValue | ReturnShape::ArcSelf => {
                w.line(&format!("                let r: {kept} = r;"));
                w.line(&format!("                {OK}(::std::boxed::Box::new(r))"));
            }
            ReturnShape::RefClone | ReturnShape::Guard => {
                w.line(&format!(
                    "                let r: {kept} = ::std::clone::Clone::clone(r);"
                ));
                w.line(&format!("                {OK}(::std::boxed::Box::new(r))"));
            }
            ReturnShape::OptionSelf | ReturnShape::ResultSelf => unwrapped(
                w,
                "r",
                shape,
                &from.name,
                &format!("{{ let r: {kept} = r; {OK}(::std::boxed::Box::new(r)) }}"),
            ),
        }
        w.line("            }");
        w.entries
            .push(((start, w.line), Target::Handle(index, from.name.clone())));
    }
    let end = w.next_line();
    w.line("            other => Err(CallError::new(format!(\"no handle method `{other}`\"))),");
    w.line("        }");
    w.line("    }");
    w.entries.push(((end, w.line), Target::Type(index)));
}

/// Whether the type's calls take paths (`PathBuf`, `&Path`, `AsRef<Path>`, at any depth: the
/// model then lists `PathBuf` among its value types): each run's paths are in a fresh
/// directory of its own (`covcon_rt::Driver::fresh_dir`), since files one run writes would be
/// there for the next.
fn takes_paths(ty: &TypeModel) -> bool {
    ty.values.iter().any(|v| v.path == PATH_BUF)
}

/// One function per value type of the plan (`fn v0(arg: &Arg) -> Result<::k::Opts, CallError>`)
/// that builds a value with the constructor the argument names.
fn value_builders(
    w: &mut Writer,
    index: usize,
    plan: &TypePlan<'_>,
    values: &ValueNames,
    substitutions: &BTreeMap<String, String>,
    globs: &str,
) {
    let args_cx = ArgsCx {
        substitutions,
        values,
        source: Source::Slice,
        confined: plan.model.confined,
        plain_flows: &plan.plain_flows,
    };
    for (j, value) in plan.model.values.iter().enumerate() {
        let ty = format!("::{}", value.path);
        let head = w.next_line();
        w.line("#[allow(unused, unreachable_code)]");
        w.line(&format!(
            "fn v{j}(arg: &::covcon_rt::Arg) -> {RESULT}<{ty}, CallError> {{"
        ));
        w.line("    let (ctor, args) = arg.built()?;");
        w.line("    match ctor {");
        w.entries.push(((head, w.line), Target::Type(index)));
        for c in &value.constructors {
            if !c.supported()
                || plan
                    .skip_values
                    .contains(&(value.path.clone(), c.name.clone()))
            {
                continue;
            }
            let start = w.next_line();
            w.line(&format!("        {:?} => {{", c.name));
            w.line(&globs.replacen("                ", "            ", 1));
            let built = match (value.path.as_str(), c.name.as_str()) {
                // The copy reads covcon's clock (`covcon_rt::time`): so do its arguments.
                ("std::time::Instant", "now") => "::covcon_rt::time::now()".to_string(),
                ("std::time::SystemTime", "now") => "::covcon_rt::time::system_now()".to_string(),
                // A path is in the run's own directory (`covcon_rt::run_path`).
                (PATH_BUF, "from") => {
                    "::covcon_rt::run_path(::covcon_rt::arg_at(args, 0)?)".to_string()
                }
                _ => construction(c, &ty, &args_cx, w, "            "),
            };
            let name = &c.name;
            match c.returns {
                ReturnShape::SelfValue | ReturnShape::ArcSelf => {
                    w.line(&format!("            {OK}({built})"))
                }
                ReturnShape::RefClone | ReturnShape::Guard => w.line(&format!(
                    "            {OK}(::std::clone::Clone::clone({built}))"
                )),
                ReturnShape::ResultSelf => w.line(&format!(
                    "            {built}.map_err(|e| {CALL_ERROR}(::std::format!(\"`{name}` returned Err({{}})\", ::covcon_rt::debug_text!(e).unwrap_or_default())))"
                )),
                ReturnShape::OptionSelf => w.line(&format!(
                    "            {built}.ok_or_else(|| {CALL_ERROR}(\"`{name}` returned None\"))"
                )),
            }
            w.line("        }");
            w.entries.push((
                (start, w.line),
                Target::Value(index, value.path.clone(), c.name.clone()),
            ));
        }
        let end = w.next_line();
        w.line(&format!(
            "        other => Err(CallError::new(format!(\"no constructor `{{other}}` of `{}`\"))),",
            value.path
        ));
        w.line("    }");
        w.line("}");
        w.entries.push(((end, w.line), Target::Type(index)));
    }
}

/// The expression that calls a constructor of `self_ty` (after its arguments' `let`s, which
/// are written to `w`): a function with its builder chain, `Default`, an enum variant or a
/// literal.
fn construction(
    c: &Constructor,
    self_ty: &str,
    args_cx: &ArgsCx<'_>,
    w: &mut Writer,
    indent: &str,
) -> String {
    let mut next_arg = 0;
    let (mut lets, args) = arguments(&c.params, &mut next_arg, args_cx);
    let plain = self_ty.trim_start_matches('<').trim_end_matches('>');
    let mut expr = match c.kind {
        ConstructorKind::Default => format!("<{plain} as ::std::default::Default>::default()"),
        ConstructorKind::Variant if args.is_empty() => format!("{plain}::{}", c.name),
        ConstructorKind::Variant => format!("{plain}::{}({})", c.name, args.join(", ")),
        ConstructorKind::Literal => {
            let fields: Vec<String> = c
                .params
                .iter()
                .zip(&args)
                .map(|(p, a)| format!("{}: {a}", p.name))
                .collect();
            let struct_name = plain.rsplit("::").next().unwrap_or(plain);
            let head = if struct_name == c.name {
                plain.to_string()
            } else {
                format!("{plain}::{}", c.name)
            };
            format!("{head} {{ {} }}", fields.join(", "))
        }
        ConstructorKind::Function if c.converts.is_some() => format!(
            "<{plain} as ::core::convert::From<{}>>::from({})",
            c.converts.as_deref().unwrap_or_default(),
            args.join(", ")
        ),
        ConstructorKind::Function if c.function.is_some() => format!(
            "::{}{}({})",
            c.function.as_deref().unwrap_or_default(),
            turbofish(&c.generic_args, args_cx.substitutions),
            args.join(", ")
        ),
        ConstructorKind::Function | ConstructorKind::Builder => format!(
            "<{}>::{}{}({})",
            c.owner
                .as_ref()
                .map_or_else(|| plain.to_string(), |o| format!("::{o}")),
            c.name,
            turbofish(&c.generic_args, args_cx.substitutions),
            args.join(", ")
        ),
    };
    for link in &c.chain {
        let (more_lets, args) = arguments(&link.params, &mut next_arg, args_cx);
        lets.extend(more_lets);
        let _ = write!(expr, ".{}({})", link.name, args.join(", "));
    }
    for line in lets {
        w.line(&format!("{indent}{line}"));
    }
    expr
}

/// `::<A, B>` for a generic function's arguments, the type's parameters put in.
fn turbofish(generic_args: &[String], substitutions: &BTreeMap<String, String>) -> String {
    if generic_args.is_empty() {
        return String::new();
    }
    let args: Vec<String> = generic_args
        .iter()
        .map(|a| substitute(a, substitutions))
        .collect();
    format!("::<{}>", args.join(", "))
}

/// The builder function of each value type, by path.
struct ValueNames(BTreeMap<String, String>);

impl ValueNames {
    fn of(ty: &TypeModel) -> ValueNames {
        ValueNames(
            ty.values
                .iter()
                .enumerate()
                .map(|(j, v)| (v.path.clone(), format!("v{j}")))
                .collect(),
        )
    }
}

/// Where arguments come from: a call's (`cx.arg(call, i)`) or a built value's
/// (`covcon_rt::arg_at(args, i)`).
#[derive(Clone, Copy)]
enum Source {
    Call,
    Slice,
}

struct ArgsCx<'a> {
    substitutions: &'a BTreeMap<String, String>,
    values: &'a ValueNames,
    source: Source,
    /// The instances are [`analysis::TypeModel::confined`]: kept in a `covcon_rt::Confined`,
    /// one more dereference from the value.
    confined: bool,
    /// Methods whose returned values are not passed along ([`plain_flow`]).
    plain_flows: &'a BTreeSet<String>,
}

impl ArgsCx<'_> {
    fn decoded(&self, i: usize) -> String {
        match self.source {
            Source::Call => format!("cx.arg(call, {i})?"),
            Source::Slice => format!("::covcon_rt::arg_at(args, {i})?"),
        }
    }
    fn closure(&self, i: usize) -> String {
        match self.source {
            Source::Call => format!("cx.closure_value(call, {i})?"),
            Source::Slice => format!("::covcon_rt::closure_at(args, {i})?"),
        }
    }
    fn raw(&self, i: usize) -> String {
        match self.source {
            Source::Call => format!("cx.raw(call, {i})?"),
            Source::Slice => format!("::covcon_rt::raw_at(args, {i})?"),
        }
    }
}

/// The crate root and the type's module (`k`, `k::m`) of `k::m::Type`.
fn glob_modules(type_path: &str) -> Vec<String> {
    let segments: Vec<&str> = type_path.split("::").collect();
    let mut modules = Vec::new();
    if segments.len() >= 2 {
        modules.push(segments[0].to_string());
    }
    if segments.len() >= 3 {
        modules.push(segments[..segments.len() - 1].join("::"));
    }
    modules
}

/// Identifier substitutions inside parameter types: generic names to their instantiation,
/// `Self` to the concrete type.
fn substitutions(plan: &TypePlan<'_>) -> BTreeMap<String, String> {
    let mut map: BTreeMap<String, String> = generic_names(&plan.model.generics)
        .into_iter()
        .zip(plan.generic_args.iter().cloned())
        .filter(|(name, _)| !name.starts_with('\''))
        .collect();
    map.insert("Self".to_string(), "CovconSelf".to_string());
    map
}

/// `let` statements decoding the parameters and the expressions passed for them.
fn arguments(
    params: &[Param],
    next_arg: &mut usize,
    args_cx: &ArgsCx<'_>,
) -> (Vec<String>, Vec<String>) {
    let mut lets = Vec::new();
    let mut args = Vec::new();
    for param in params {
        let i = *next_arg;
        *next_arg += 1;
        let (decode, pass) = argument(param, i, args_cx);
        if let Some(decode) = decode {
            lets.push(decode);
        }
        args.push(pass);
    }
    (lets, args)
}

/// The parameters and argument texts of a closure that shows its call what it was handed
/// (`kind`, an `FnOnce` closure with `shown` arguments), for the harness and the reproducer:
/// `{var}_{k}` and `{seen}({var}_{k})` for an argument shown, `_` and `none` for the others.
pub(crate) fn seeing_closure_parts(
    kind: &ParamKind,
    var: &str,
    seen: &str,
    none: &str,
) -> (String, String) {
    let arity = match kind {
        ParamKind::Closure { arity, .. } => *arity,
        _ => 0,
    };
    let (params, texts): (Vec<String>, Vec<String>) = (0..arity)
        .map(|k| match kind.shows_argument(k) {
            true => (format!("{var}_{k}"), format!("{seen}({var}_{k})")),
            false => ("_".to_string(), none.to_string()),
        })
        .unzip();
    (params.join(", "), texts.join(", "))
}

/// An expression building an owned value of a kind that holds a value type, from the
/// undecoded argument `raw`; `None` when the kind holds none (then `FromArg` decodes it).
fn built_expr(kind: &ParamKind, raw: &str, args_cx: &ArgsCx<'_>) -> Option<String> {
    let values = args_cx.values;
    match kind {
        ParamKind::Value { path } => {
            let f = values.0.get(path)?;
            Some(format!("{f}({raw})?"))
        }
        // A type parameter instantiated with a value type (a default of the crate's own).
        ParamKind::Generic { name } => {
            let ty = args_cx.substitutions.get(name)?;
            let f = values.0.get(ty.trim_start_matches("::"))?;
            Some(format!("{f}({raw})?"))
        }
        ParamKind::Pointer { pointer, inner } => {
            let inner = built_expr(inner, raw, args_cx)?;
            Some(format!("{}::new({inner})", pointer.path()))
        }
        ParamKind::Option { inner } => {
            let inner = built_expr(inner, "a", args_cx)?;
            Some(format!(
                "match {raw}.option() {{ {SOME}(a) => {SOME}({inner}), {NONE} => {NONE} }}"
            ))
        }
        ParamKind::Vec { elem } | ParamKind::Slice { elem } => {
            let elem = built_expr(elem, "a", args_cx)?;
            Some(format!(
                "{raw}.items().iter().map(|a| {OK}({elem})).collect::<{RESULT}<::std::vec::Vec<_>, CallError>>()?"
            ))
        }
        _ => None,
    }
}

/// The kind a parameter that takes what `from` returned, or a built value (`Returned` with
/// `or`), has when `from` is one of `plain_flows` (its values are not passed along: the
/// harness did not compile with them): the built value's, by reference when the parameter
/// takes one. `None` for any other parameter.
pub(crate) fn plain_flow(kind: &ParamKind, plain_flows: &BTreeSet<String>) -> Option<ParamKind> {
    let ParamKind::Returned {
        from,
        by_ref,
        or: Some(built),
        ..
    } = kind
    else {
        return None;
    };
    if !plain_flows.contains(from) {
        return None;
    }
    Some(match by_ref {
        true => ParamKind::Ref {
            inner: built.clone(),
        },
        false => (**built).clone(),
    })
}

/// How argument `i` is decoded (a `let`, if any) and what is passed.
fn argument(param: &Param, i: usize, args_cx: &ArgsCx<'_>) -> (Option<String>, String) {
    if let Some(kind) = plain_flow(&param.kind, args_cx.plain_flows) {
        let plain = Param {
            kind,
            ..param.clone()
        };
        return argument(&plain, i, args_cx);
    }
    if let Some(built) = built_argument(&param.kind, i, args_cx) {
        return built;
    }
    let var = format!("a{i}");
    let ty = param.ty.trim();
    let substitutions = args_cx.substitutions;
    match &param.kind {
        ParamKind::Instance { passing } => instance_argument(*passing, var, i, args_cx),
        ParamKind::Closure {
            arity: 0, returns, ..
        } if !matches!(**returns, ParamKind::Result { .. }) =>
        {
            (
                // The value's type is inferred from the closure bound (`impl FnOnce() -> V`).
                Some(format!("let {var} = {};", args_cx.closure(i))),
                format!("::covcon_rt::closure({var})"),
            )
        }
        ParamKind::Closure {
            arity,
            returns,
            shown,
        } => {
            let value = format!("::std::clone::Clone::clone(&{var})");
            // A `Result` whose error covcon makes is decoded whole, `Ok` or `Err`.
            let value = match &**returns {
                ParamKind::Result { err: None, .. } => format!("{OK}({value})"),
                _ => value,
            };
            if shown.is_empty() {
                // Its arguments' types come from the bound (`impl FnMut(&K) -> bool`).
                let ignored = vec!["_"; *arity].join(", ");
                return (
                    Some(format!("let {var} = {};", args_cx.closure(i))),
                    format!("move |{ignored}| {{ ::covcon_rt::schedule_point(); {value} }}"),
                );
            }
            seeing_closure(&param.kind, var, &value, i, args_cx)
        }
        ParamKind::Result { err: None, .. } => (
            Some(format!("let {var} = {};", args_cx.decoded(i))),
            format!("{OK}({var})"),
        ),
        ParamKind::Result { err: Some(_), .. } => (
            Some(format!("let {var} = {};", args_cx.decoded(i))),
            var,
        ),
        // A key: the kept one a maker returned, or one made from the generated value (by the
        // value builder for a type parameter instantiated with a value type of the crate's
        // own, lasso's `Spur`; decoded otherwise).
        ParamKind::Returned {
            ty: kept,
            by_ref,
            or: Some(or),
            ..
        } => {
            let made = match built_expr(or, &format!("{var}_raw"), args_cx) {
                Some(built) => format!("{{ let {var}_raw = {}; {built} }}", args_cx.raw(i)),
                None => args_cx.decoded(i),
            };
            (
                Some(format!(
                    "let {var}: {} = match cx.kept_arg(call, {i})? {{ {SOME}(kept) => kept, {NONE} => {made} }};",
                    substitute(kept, substitutions),
                )),
                if *by_ref { format!("&{var}") } else { var },
            )
        }
        // A kept value of the type's own making: a clone, or a reference.
        ParamKind::Returned {
            ty: kept, by_ref, ..
        } => (
            Some(format!(
                "let {var} = cx.handle_arg::<{}>(call, {i})?;",
                substitute(kept, substitutions)
            )),
            if *by_ref {
                var
            } else {
                format!("::std::clone::Clone::clone({var})")
            },
        ),
        // A kept handle, by reference (`&Arc<Bar>` coerces to `&Bar`).
        ParamKind::Handle { ty, shape } => (
            Some(format!(
                "let {var} = cx.handle_arg::<{}>(call, {i})?;",
                kept_type(ty, *shape)
            )),
            var,
        ),
        // Made outside the trace (`untraced`): the test did not choose that call, and it
        // must not show as one of its own.
        ParamKind::FromReceiver { method, by_ref } => (
            Some(format!(
                "let {var}_recv = cx.receiver(call)?; let {var} = ::covcon_rt::untraced(|| {var}_recv.{method}());"
            )),
            if *by_ref { format!("&{var}") } else { var },
        ),
        kind => decoded_argument(kind, ty, var, i, args_cx),
    }
}

/// How argument `i` is built and passed when its kind holds a value type ([`built_expr`]),
/// itself or behind a reference; `None` for any other kind.
fn built_argument(
    kind: &ParamKind,
    i: usize,
    args_cx: &ArgsCx<'_>,
) -> Option<(Option<String>, String)> {
    let var = format!("a{i}");
    if let Some(expr) = built_expr(kind, &format!("a{i}_raw"), args_cx) {
        let decl = format!("let a{i}_raw = {}; let {var} = {expr};", args_cx.raw(i));
        let pass = if matches!(kind, ParamKind::Slice { .. }) {
            format!("&{var}[..]")
        } else {
            var
        };
        return Some((Some(decl), pass));
    }
    let ParamKind::Ref { inner } = kind else {
        return None;
    };
    let expr = built_expr(inner, &format!("a{i}_raw"), args_cx)?;
    let decl = format!("let a{i}_raw = {}; let {var} = {expr};", args_cx.raw(i));
    Some((Some(decl), format!("&{var}")))
}

/// How argument `i` (bound to `var`), an instance of the type passed as `passing` says, is
/// taken and passed.
fn instance_argument(
    passing: InstancePassing,
    var: String,
    i: usize,
    args_cx: &ArgsCx<'_>,
) -> (Option<String>, String) {
    let instance = format!("cx.instance(call, {i})?");
    let deref = if args_cx.confined { "&***" } else { "&**" };
    let pass = match passing {
        InstancePassing::Ref => format!("{deref}{instance}"),
        InstancePassing::Arc => format!("::std::sync::Arc::clone({instance})"),
        InstancePassing::Value => {
            return (
                Some(format!(
                    "let {var}: CovconSelf = ::covcon_rt::try_clone!({deref}{instance}).ok_or_else(|| {CALL_ERROR}(\"the instance argument needs Clone\"))?;"
                )),
                var,
            )
        }
    };
    (None, pass)
}

/// How argument `i` (bound to `var`), a closure of `kind` that shows its call what it was
/// handed, is decoded and passed: the closure answers `value`, the decoded one.
fn seeing_closure(
    kind: &ParamKind,
    var: String,
    value: &str,
    i: usize,
    args_cx: &ArgsCx<'_>,
) -> (Option<String>, String) {
    // Called at most once: what it sees of its arguments of plain data (their types
    // from the bound, `impl FnOnce(&V)`) is the call's answer too (`covcon_rt::see`,
    // recorded for the call whose arm made the closure: `seen_id` when it is made).
    let (params, texts) = seeing_closure_parts(kind, &var, "::covcon_rt::seen_text!", NONE);
    (
        Some(format!("let {var} = {};", args_cx.closure(i))),
        // A schedule point first, as in `covcon_rt::closure`.
        format!(
            "{{ let {var}_seen = ::covcon_rt::seen_id(); move |{params}| {{ ::covcon_rt::schedule_point(); ::covcon_rt::see({var}_seen, || ::std::vec![{texts}]); {value} }} }}"
        ),
    )
}

/// How argument `i` (bound to `var`) of a kind `FromArg` decodes, written `ty` in the
/// signature, is decoded and passed: by value, or a reference to the decoded value.
fn decoded_argument(
    kind: &ParamKind,
    ty: &str,
    var: String,
    i: usize,
    args_cx: &ArgsCx<'_>,
) -> (Option<String>, String) {
    let substitutions = args_cx.substitutions;
    let decoded = args_cx.decoded(i);
    let (reference, inner) = strip_reference(ty);
    // By-value parameters are left to inference from the method's signature, which
    // also covers types named through the user's imports (`Duration`, `K`). Only what
    // inference cannot see through gets a written type.
    let annotation = if ty.starts_with("&'static") {
        // Decoded as a leaked `&'static` value (`FromArg for &'static str`).
        None
    } else if !reference.is_empty() {
        if inner == "str" {
            Some("String".to_string())
        } else if inner.starts_with('[') {
            Some("Vec<_>".to_string())
        } else if inner.starts_with("impl ") || inner.starts_with("dyn ") {
            Some(owned_type(kind, substitutions))
        } else {
            None
        }
    } else if ty.starts_with("impl ") || ty.contains("dyn ") {
        Some(owned_type(kind, substitutions))
    } else if ty == "String" {
        // Written out: a generic callee (`X::from(a0)` for a type with several `From`
        // impls; `PathBuf::from` before paths went through `covcon_rt::run_path`) gives
        // inference nothing to go on.
        Some("String".to_string())
    } else {
        None
    };
    if ty.starts_with("&'static") {
        return (Some(format!("let {var} = {decoded};")), var);
    }
    let binding = if reference == "&mut " {
        format!("mut {var}")
    } else {
        var.clone()
    };
    let decl = match annotation {
        Some(ty) => format!("let {binding}: {ty} = {decoded};"),
        None => format!("let {binding} = {decoded};"),
    };
    (Some(decl), format!("{reference}{var}"))
}

/// `("&", "str")` for `&'a str`, `("&mut ", "[u8]")` for `&mut [u8]`, `("", ty)` otherwise.
fn strip_reference(ty: &str) -> (&'static str, &str) {
    let Some(rest) = ty.strip_prefix('&') else {
        return ("", ty);
    };
    let mut rest = rest.trim_start();
    if rest.starts_with('\'') {
        rest = rest
            .split_once(char::is_whitespace)
            .map_or("", |(_, r)| r)
            .trim_start();
    }
    match rest.strip_prefix("mut ") {
        Some(inner) => ("&mut ", inner.trim()),
        None => ("&", rest.trim()),
    }
}

/// The owned Rust type covcon generates for a kind.
fn owned_type(kind: &ParamKind, substitutions: &BTreeMap<String, String>) -> String {
    match kind {
        ParamKind::Int { signed, bits } => format!("{}{bits}", if *signed { 'i' } else { 'u' }),
        ParamKind::Bool => "bool".to_string(),
        ParamKind::Char => "char".to_string(),
        ParamKind::Float { bits } => format!("f{bits}"),
        ParamKind::String | ParamKind::Str => "String".to_string(),
        ParamKind::Vec { elem } | ParamKind::Slice { elem } => {
            format!("Vec<{}>", owned_type(elem, substitutions))
        }
        ParamKind::Ref { inner } => owned_type(inner, substitutions),
        ParamKind::Option { inner } => format!("Option<{}>", owned_type(inner, substitutions)),
        ParamKind::Result { ok, .. } => format!("Result<{}, _>", owned_type(ok, substitutions)),
        ParamKind::Tuple { elems } => {
            let elems: Vec<String> = elems.iter().map(|e| owned_type(e, substitutions)).collect();
            if elems.len() == 1 {
                format!("({},)", elems[0])
            } else {
                format!("({})", elems.join(", "))
            }
        }
        ParamKind::Duration => "::std::time::Duration".to_string(),
        ParamKind::NonZero { signed, bits } => {
            format!(
                "::std::num::NonZero<{}{bits}>",
                if *signed { 'i' } else { 'u' }
            )
        }
        ParamKind::Pointer { pointer, inner } => {
            format!("{}<{}>", pointer.path(), owned_type(inner, substitutions))
        }
        ParamKind::Instance { .. } => "CovconSelf".to_string(),
        ParamKind::Closure { returns, .. } => owned_type(returns, substitutions),
        ParamKind::Generic { name } => substitutions
            .get(name)
            .cloned()
            .unwrap_or_else(|| "_".into()),
        ParamKind::Value { path } => format!("::{path}"),
        ParamKind::Handle { ty, .. } => format!("::{ty}"),
        ParamKind::Returned { ty, .. } => substitute(ty, substitutions),
        ParamKind::FromReceiver { .. } | ParamKind::Unsupported => "_".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(param: (&str, ParamKind), expect: &str) {
        let substitutions = BTreeMap::from([
            ("K".to_string(), "u32".to_string()),
            ("Self".to_string(), "CovconSelf".to_string()),
        ]);
        let param = Param {
            name: "p".into(),
            ty: param.0.into(),
            kind: param.1,
        };
        let values = ValueNames(BTreeMap::from([("k::Opts".to_string(), "v0".to_string())]));
        let args_cx = ArgsCx {
            substitutions: &substitutions,
            values: &values,
            source: Source::Call,
            confined: false,
            plain_flows: &BTreeSet::new(),
        };
        let (decode, pass) = argument(&param, 0, &args_cx);
        assert_eq!(format!("{} => {pass}", decode.unwrap_or_default()), expect);
    }

    /// sled's `open_tree` hands out a `Tree`: an uncaught call answers its variant, not the
    /// tree's `Debug` (which read the tree the other thread had dropped, and panicked).
    #[test]
    fn a_call_handing_out_a_handle_answers_its_variant_not_the_handles_text() {
        let via = |from: &str, shape| analysis::Via {
            ty: "k::Tree".into(),
            from: from.into(),
            shape,
            kept: None,
        };
        let ty = TypeModel {
            methods: vec![
                analysis::Method {
                    name: "Tree::insert".into(),
                    via: Some(via("open_tree", ReturnShape::ResultSelf)),
                    ..analysis::Method::default()
                },
                analysis::Method {
                    name: "Tree::len".into(),
                    via: Some(via("#1", ReturnShape::SelfValue)),
                    ..analysis::Method::default()
                },
            ],
            ..TypeModel::default()
        };
        let shape = |name: &str| ty.hands_out(name).map(|h| h.shape);
        assert_eq!(shape("open_tree"), Some(ReturnShape::ResultSelf));
        assert_eq!(shape("#1"), None);
        assert_eq!(shape("len"), None);
        let text = handle_text(ReturnShape::ResultSelf);
        assert!(
            text.contains("\"Ok(..)\"") && text.contains("Err("),
            "{text}"
        );
        assert!(!text.contains("result_text"), "{text}");
        assert_eq!(handle_text(ReturnShape::ArcSelf), NONE);
    }

    #[test]
    fn values_of_the_crates_own_types_are_built_by_their_builder_function() {
        let opts = || {
            Box::new(ParamKind::Value {
                path: "k::Opts".into(),
            })
        };
        check(
            ("Opts", *opts()),
            "let a0_raw = cx.raw(call, 0)?; let a0 = v0(a0_raw)?; => a0",
        );
        check(
            ("&Opts", ParamKind::Ref { inner: opts() }),
            "let a0_raw = cx.raw(call, 0)?; let a0 = v0(a0_raw)?; => &a0",
        );
        check(
            ("Option<Opts>", ParamKind::Option { inner: opts() }),
            "let a0_raw = cx.raw(call, 0)?; let a0 = match a0_raw.option() { ::std::option::Option::Some(a) => ::std::option::Option::Some(v0(a)?), ::std::option::Option::None => ::std::option::Option::None }; => a0",
        );
    }

    #[test]
    fn arguments_are_inferred_except_where_a_reference_hides_the_owned_type() {
        check(
            (
                "u64",
                ParamKind::Int {
                    signed: false,
                    bits: 64,
                },
            ),
            "let a0 = cx.arg(call, 0)?; => a0",
        );
        check(
            ("&str", ParamKind::Str),
            "let a0: String = cx.arg(call, 0)?; => &a0",
        );
        check(
            ("&'a str", ParamKind::Str),
            "let a0: String = cx.arg(call, 0)?; => &a0",
        );
        check(
            (
                "&[u8]",
                ParamKind::Slice {
                    elem: Box::new(ParamKind::Int {
                        signed: false,
                        bits: 8,
                    }),
                },
            ),
            "let a0: Vec<_> = cx.arg(call, 0)?; => &a0",
        );
        check(
            (
                "&K",
                ParamKind::Ref {
                    inner: Box::new(ParamKind::Generic { name: "K".into() }),
                },
            ),
            "let a0 = cx.arg(call, 0)?; => &a0",
        );
        check(
            ("&mut Vec<u8>", ParamKind::Unsupported),
            "let mut a0 = cx.arg(call, 0)?; => &mut a0",
        );
        check(
            ("impl Into<String>", ParamKind::String),
            "let a0: String = cx.arg(call, 0)?; => a0",
        );
        check(
            (
                "impl FnOnce() -> K",
                ParamKind::Closure {
                    returns: Box::new(ParamKind::Generic { name: "K".into() }),
                    arity: 0,
                    shown: vec![],
                },
            ),
            "let a0 = cx.closure_value(call, 0)?; => ::covcon_rt::closure(a0)",
        );
        // A closure called at most once shows its call what it is handed; one that may be
        // called for every entry (`FnMut`, `Fn`) ignores its arguments.
        let unit = || Box::new(ParamKind::Tuple { elems: vec![] });
        check(
            (
                "impl FnOnce(&u64)",
                ParamKind::Closure {
                    returns: unit(),
                    arity: 1,
                    shown: vec![true],
                },
            ),
            "let a0 = cx.closure_value(call, 0)?; => { let a0_seen = ::covcon_rt::seen_id(); move |a0_0| { ::covcon_rt::schedule_point(); ::covcon_rt::see(a0_seen, || ::std::vec![::covcon_rt::seen_text!(a0_0)]); ::std::clone::Clone::clone(&a0) } }",
        );
        check(
            (
                "impl FnMut(&u64)",
                ParamKind::Closure {
                    returns: unit(),
                    arity: 1,
                    shown: vec![],
                },
            ),
            "let a0 = cx.closure_value(call, 0)?; => move |_| { ::covcon_rt::schedule_point(); ::std::clone::Clone::clone(&a0) }",
        );
        check(
            (
                "&Self",
                ParamKind::Instance {
                    passing: InstancePassing::Ref,
                },
            ),
            " => &**cx.instance(call, 0)?",
        );
        check(
            (
                "Arc<Self>",
                ParamKind::Instance {
                    passing: InstancePassing::Arc,
                },
            ),
            " => ::std::sync::Arc::clone(cx.instance(call, 0)?)",
        );
    }

    #[test]
    fn generics_are_instantiated_with_static_lifetimes_and_small_constants() {
        let param =
            |name: &str, kind: GenericKind, written: &str, default: Option<&str>| GenericParam {
                name: name.into(),
                kind,
                written: written.into(),
                default: default.map(String::from),
                candidates: vec![],
                boxed: false,
            };
        let generics = [
            param("'a", GenericKind::Lifetime, "'a", None),
            param("K", GenericKind::Type, "K: Hash + Eq", None),
            param("N", GenericKind::Const, "const N: usize", None),
            param(
                "V",
                GenericKind::Type,
                "V = String",
                Some("::std::string::String"),
            ),
        ];
        assert_eq!(generic_names(&generics), ["'a", "K", "N", "V"]);
        assert_eq!(
            instantiate(&generics, 0),
            ["'static", "u32", "4", "::std::string::String"]
        );
        assert_eq!(instantiate(&generics, 2)[1], "String");
    }

    /// `Once<T = ()>`: the unit default shows nothing of a value, so `T` is tried as a
    /// parameter without a default, the unit last.
    #[test]
    fn a_unit_default_is_tried_last() {
        let generics = [GenericParam {
            name: "T".into(),
            kind: GenericKind::Type,
            written: "T = ()".into(),
            default: Some("()".into()),
            candidates: vec![],
            boxed: false,
        }];
        assert_eq!(attempts(&generics), CANDIDATES.len() + 1);
        let tried: Vec<String> = (0..attempts(&generics))
            .map(|attempt| instantiate(&generics, attempt).remove(0))
            .collect();
        assert_eq!(tried, ["u32", "i64", "String", "Vec<u8>", "()"]);
    }

    /// A parameter the crate may keep in memory it manages itself gets its first integer
    /// boxed first: a value read twice is then freed twice. A first candidate that owns heap
    /// memory already, or a crate type, is tried as it is.
    #[test]
    fn a_parameter_kept_in_manual_memory_is_tried_boxed_first() {
        let param = |candidates: &[&str], boxed| GenericParam {
            name: "T".into(),
            kind: GenericKind::Type,
            written: "T".into(),
            default: None,
            candidates: candidates.iter().map(|c| c.to_string()).collect(),
            boxed,
        };
        let tried = |g: GenericParam| -> Vec<String> {
            let generics = [g];
            (0..attempts(&generics))
                .map(|attempt| instantiate(&generics, attempt).remove(0))
                .collect()
        };
        assert_eq!(
            tried(param(&["i32"], true))[..3],
            ["Box<i32>", "i32", "u32"]
        );
        assert_eq!(tried(param(&[], true))[..2], ["Box<u32>", "u32"]);
        assert_eq!(tried(param(&["i32"], false))[..2], ["i32", "u32"]);
        assert_eq!(tried(param(&["String"], true))[0], "String");
        assert_eq!(tried(param(&["::k::Job"], true))[0], "::k::Job");
        // Only a box covcon put first is one `unbox` may take back: not the crate's own.
        let generics = |candidates: &[&str]| [param(candidates, true)];
        assert!(boxed_attempt(&generics(&["i32"]), 0));
        assert!(!boxed_attempt(&generics(&["i32"]), 1));
        assert!(!boxed_attempt(&generics(&["Box<i32>"]), 0));
    }

    #[test]
    fn crates_named_by_absolute_paths_are_found_in_generated_code() {
        let text = "type CovconSelf = ::k::Map<::dashmap::DashMap<u32, u32>, ::std::string::String>;\n\
                    use ::metrics::CounterFn as _; let x = <::k::X>::new(); ::covcon_rt::closure(a);\n\
                    a::b::c(); Vec::<u8>::new();";
        let found: Vec<String> = extern_crates(text).into_iter().collect();
        assert_eq!(found, ["dashmap", "k", "metrics"]);
    }

    #[test]
    fn defaults_that_name_other_parameters_get_their_instantiation() {
        let generics = [
            GenericParam {
                name: "M".into(),
                kind: GenericKind::Type,
                written: "M".into(),
                default: None,
                candidates: vec!["::k::Counter".into()],
                boxed: false,
            },
            GenericParam {
                name: "C".into(),
                kind: GenericKind::Type,
                written: "C = fn() -> M".into(),
                default: Some("fn() -> M".into()),
                candidates: vec![],
                boxed: false,
            },
        ];
        assert_eq!(
            instantiate(&generics, 0),
            ["::k::Counter", "fn() -> ::k::Counter"]
        );
        assert_eq!(attempts(&generics), 5);
    }
}
