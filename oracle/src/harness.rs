//! [`prepare`]: from a [`Model`] to a built harness binary. Copies and instruments the
//! workspace (`copy.rs`), writes the runtime and the generated harness (`codegen.rs`), builds
//! it (`build.rs`) and, when a generated call does not compile, drops that constructor or
//! method (or tries the type's next generic instantiation) and builds again.
//!
//! A build is skipped when nothing that goes into it changed: the key of the last successful
//! preparation is kept in `<out>/harness/covcon-plan.json` together with what it dropped.

use crate::build::{self, CompileError};
use crate::clocks;
use crate::codegen::{self, Target, TypePlan};
use crate::copy::{self, Insertion, Rank};
use crate::{OracleConfig, OracleError};
use analysis::refs::{self, MethodRef};
use analysis::{
    ClockRead, ClockSite, Diagnostic, GenericKind, Model, ParamKind, Reason, Severity, Span,
    SyncOp, SyncSite, TypeModel,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A built harness, ready for workers.
#[derive(Debug, Clone)]
pub struct Harness {
    /// The worker executable.
    pub binary: PathBuf,
    /// Wall time of the preparation's builds (0 when cached).
    pub build_secs: f64,
    /// True when nothing changed since the last preparation and no build ran.
    pub cached: bool,
    /// Every supported type of the model, driven or not.
    pub types: Vec<PreparedType>,
    /// What could not be driven, in words a user can act on.
    pub diagnostics: Vec<Diagnostic>,
    /// `<out>/copy`: the instrumented copy of the workspace.
    pub copy_root: PathBuf,
    /// With [`prepare_mutants`]: every mutant of the types, and of those the ones the copy did
    /// not compile with (unviable), with rustc's message.
    pub mutants: Vec<crate::Mutant>,
    pub unviable: BTreeMap<u32, String>,
}

/// How one type of the model went into the harness.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PreparedType {
    /// `krate::module::Type`.
    pub path: String,
    /// Whether the harness can build and call it at all.
    pub driven: bool,
    /// The concrete type used (`::krate::Cache<u32, u32>`).
    pub concrete: String,
    /// Type parameter name to the concrete type chosen for it.
    pub instantiation: BTreeMap<String, String>,
    /// Constructors and methods the harness can call.
    pub constructors: Vec<String>,
    pub methods: Vec<String>,
    /// What was left out and why.
    pub dropped: Vec<Dropped>,
    /// Methods whose returned values are not passed along to the parameters that could
    /// take them (`ParamKind::Returned` with `or`): the harness did not compile with it (a value
    /// that is not `Clone`, `Send` or `Sync`), so those parameters take built values.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub plain_flows: BTreeSet<String>,
}

/// A type, constructor or method the harness cannot drive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dropped {
    pub kind: DroppedKind,
    /// The constructor or method name (the type's path for a whole type, `path::ctor` for a
    /// value type's constructor).
    pub name: String,
    pub reason: Reason,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DroppedKind {
    Type,
    Constructor,
    Method,
    /// A constructor of one of the type's value types.
    ValueConstructor,
    /// The scope code of a method that hands out a guard (`analysis::ScopeGuard`), by the
    /// method's name: the method is still called, its guard is not kept.
    Scope,
}

impl PreparedType {
    /// The instantiation as the generator wants it (type parameter to [`ParamKind`]): a
    /// primitive, or one of the type's `values` (a default or candidate of the crate's own).
    pub fn instantiation_kinds(
        &self,
        values: &[analysis::ValueType],
    ) -> BTreeMap<String, ParamKind> {
        self.instantiation
            .iter()
            .filter_map(|(name, ty)| {
                Some((name.clone(), analysis::type_argument_kind(ty, values)?))
            })
            .collect()
    }
}

impl Harness {
    /// The model restricted to what the harness can drive: dropped types, constructors and
    /// methods are marked unsupported with the reason, and pairs with a dropped method are
    /// removed, so the generator never asks for a call the harness cannot make.
    pub fn drivable_model(&self, model: &Model) -> Model {
        let mut model = model.clone();
        for ty in &mut model.types {
            let Some(prepared) = self.types.iter().find(|p| p.path == ty.path) else {
                continue;
            };
            if !prepared.driven {
                let reason = prepared
                    .dropped
                    .iter()
                    .find(|d| d.kind == DroppedKind::Type);
                ty.untest(reason.map(|d| d.reason.clone()));
            }
            // Last to first: where a member was dropped twice, the first drop says why.
            for d in prepared.dropped.iter().rev() {
                let reason = d.reason.clone();
                match d.kind {
                    DroppedKind::Constructor => ty.untest_constructor(&d.name, reason),
                    DroppedKind::Method => ty.untest_method(&d.name, reason),
                    DroppedKind::ValueConstructor => {
                        if let Some((path, name)) = refs::value_constructor_parts(&d.name) {
                            ty.untest_value_constructor(path, name, reason);
                        }
                    }
                    DroppedKind::Type | DroppedKind::Scope => {}
                }
            }
            ty.replace_param_kinds(|kind| codegen::plain_flow(kind, &prepared.plain_flows));
            ty.retain_scopes(|from| {
                prepared.methods.iter().any(|m| m == from)
                    && prepared.find(DroppedKind::Scope, from).is_none()
            });
            let callable: BTreeSet<&str> = prepared.methods.iter().map(String::as_str).collect();
            ty.retain_pairs(|m| callable.contains(m));
        }
        model
    }
}

impl PreparedType {
    fn find(&self, kind: DroppedKind, name: &str) -> Option<&Dropped> {
        self.dropped
            .iter()
            .find(|d| d.kind == kind && d.name == name)
    }
}

/// The code that makes a plan (how the harness is generated, built and its errors read):
/// part of the plan's cache key, so that a plan saved by a covcon whose code differs, in its
/// reasons or in what it generates, is never reused. A version to bump by hand was forgotten
/// once already.
const PLAN_SOURCES: [&str; 5] = [
    include_str!("harness.rs"),
    include_str!("clocks.rs"),
    include_str!("codegen.rs"),
    include_str!("copy.rs"),
    include_str!("build.rs"),
];

/// Most split points per type that get a schedule point.
const SPLIT_POINTS_PER_TYPE: usize = 12;

/// Most builds one preparation runs.
const MAX_ROUNDS: usize = 8;

/// Copies, instruments, generates and builds the harness for `model`.
pub fn prepare(model: &Model, config: &OracleConfig) -> Result<Harness, OracleError> {
    prepare_with(model, config, &BTreeMap::new())
}

/// [`prepare`], with the generic arguments of some types fixed: type path to one concrete
/// type per generic parameter, in declaration order (`"k::Cache" => ["String", "u64"]`).
pub fn prepare_with(
    model: &Model,
    config: &OracleConfig,
    instantiations: &BTreeMap<String, Vec<String>>,
) -> Result<Harness, OracleError> {
    prepare_inner(model, config, instantiations, false)
}

/// [`prepare_with`], with every mutant of the types compiled into the copy as a mutant
/// schema (`mutants.rs`): a worker started with `COVCON_MUTANT=N` runs mutant `N`, one started
/// without it the code as written. Mutants the copy does not compile with are left out and
/// listed in [`Harness::unviable`].
pub fn prepare_mutants(
    model: &Model,
    config: &OracleConfig,
    instantiations: &BTreeMap<String, Vec<String>>,
) -> Result<Harness, OracleError> {
    prepare_inner(model, config, instantiations, true)
}

fn prepare_inner(
    model: &Model,
    config: &OracleConfig,
    instantiations: &BTreeMap<String, Vec<String>>,
    with_mutants: bool,
) -> Result<Harness, OracleError> {
    let prep = Preparation::new(model, config)?;
    let mutants = if with_mutants {
        prep.mutants()
    } else {
        Vec::new()
    };
    let key_hasher = prep.key_hasher(instantiations, &mutants);
    let types = &prep.types;
    let mut state = State::new(types, instantiations);
    let saved = load_plan(&prep.harness_dir);
    if let Some(saved) = &saved {
        state.disabled = saved.disabled.iter().cloned().collect();
        state.blocking = saved.blocking.iter().cloned().collect();
    }
    let mut round = 0;
    let mut retried_fresh = false;
    let mut build_secs = 0.0;
    for line in &prep.clocks.left_real {
        state.note(line.clone());
    }
    let mut clock_patches = prep.clocks.patches.as_slice();
    loop {
        let insertions = prep.insertions(&mutants, &state.disabled, &state.blocking);
        let copy = copy::sync(
            &prep.workspace_root,
            &prep.out_dir,
            &insertions,
            &prep.manifests,
            &prep.runtime_dir,
        )?;
        state.note_misplaced(&copy.misplaced);
        let mut key = key_hasher.clone();
        copy.fingerprint.hash(&mut key);
        let key = key.finish();
        if round == 0 && !retried_fresh {
            match saved.as_ref() {
                Some(saved) if saved.key == key => state.restore(saved),
                // Something changed: the old plan's left-out insertions may not apply.
                _ if !state.disabled.is_empty() || !state.blocking.is_empty() => {
                    state.disabled.clear();
                    state.blocking.clear();
                    retried_fresh = true;
                    continue;
                }
                _ => {}
            }
        }
        let generated = prep.generate(&mut state, &copy.root, clock_patches)?;
        let binary = prep.target_dir.join("release").join(binary_name());
        if round == 0 && binary.exists() && saved.as_ref().is_some_and(|s| s.key == key && s.built)
        {
            return Ok(state
                .finish(binary, 0.0, true, copy.root, types)
                .with_mutants(mutants, &state));
        }
        let build_started = Instant::now();
        let outcome = build::run(&prep.argv, config.verbose)?;
        build_secs += build_started.elapsed().as_secs_f64();
        if outcome.success {
            state.save(&prep.harness_dir, key)?;
            return Ok(state
                .finish(binary, build_secs, false, copy.root, types)
                .with_mutants(mutants, &state));
        }
        round += 1;
        if !clock_patches.is_empty() && fails_in_clocks(&outcome, &prep.out_dir) {
            state.note(format!(
                "the dependency clocks covcon patches ({}) do not build here and stay real; \
                 answers that depend on them may be reported: {}",
                clocks::names(clock_patches),
                build_error(&outcome)
            ));
            clock_patches = &[];
            continue;
        }
        // A constant that failed to evaluate for a type argument (E0080) is no instrumentation's
        // fault: a boxed argument the type refuses is moved on first.
        let const_eval = outcome
            .errors
            .iter()
            .any(|e| e.rendered.starts_with("error[E0080]"));
        let mut progress = (const_eval && state.unbox(types, &outcome.errors))
            || state.absorb(
                &outcome.errors,
                &generated,
                &prep.harness_dir,
                &copy.root,
                &prep.workspace_root,
                &insertions,
                types,
            );
        let max_rounds = if mutants.is_empty() {
            MAX_ROUNDS
        } else {
            // Each round can take out several unviable mutants, but a borrow error waits
            // for the type errors before it.
            MAX_ROUNDS * 3
        };
        if !progress && state.unbox(types, &outcome.errors) {
            progress = true;
        }
        if (!progress || round >= max_rounds) && state.disable_sites(&insertions) {
            // Before giving up: one more round with no synchronisation site wrapped.
            progress = true;
            round = round.min(max_rounds - 1);
        }
        if !progress || round >= max_rounds {
            return Err(build_error(&outcome));
        }
    }
}

/// What every build round of one preparation works from: the types to drive and their
/// files, and where the copy, the runtime, the harness and its build go.
struct Preparation<'m> {
    model: &'m Model,
    config: &'m OracleConfig,
    /// The supported types of the model.
    types: Vec<&'m TypeModel>,
    /// The directory of each type's package, by index into `types`.
    package_dirs: Vec<PathBuf>,
    manifests: BTreeSet<PathBuf>,
    crate_items: Vec<Insertion>,
    workspace_root: PathBuf,
    out_dir: PathBuf,
    harness_dir: PathBuf,
    runtime_dir: PathBuf,
    target_dir: PathBuf,
    /// The command that builds the harness.
    argv: Vec<String>,
    /// Dependency clocks patched to read the virtual clock (`clocks.rs`), and the notes of
    /// those left real.
    clocks: clocks::ClockPatches,
}

impl<'m> Preparation<'m> {
    /// Finds the workspace and the types' packages, and writes the runtime.
    fn new(model: &'m Model, config: &'m OracleConfig) -> Result<Preparation<'m>, OracleError> {
        let out_dir = absolute_dir(&config.out_dir)?;
        let workspace_root = config.workspace_root.canonicalize().map_err(|e| {
            OracleError::io(
                format!("reading the workspace {}", config.workspace_root.display()),
                e,
            )
        })?;
        let harness_dir = out_dir.join("harness");
        let runtime_dir = out_dir.join("covcon-rt");
        let target_dir = out_dir.join("target");
        write_runtime(&runtime_dir)?;
        let clocks = clocks::patch_dependency_clocks(model, &out_dir, &runtime_dir)?;

        let types: Vec<&TypeModel> = model.types.iter().filter(|t| t.supported()).collect();
        let manifests = manifests(model, &types, &workspace_root);
        let package_dirs: Vec<PathBuf> = types
            .iter()
            .map(|ty| {
                manifest_of(model, ty, &workspace_root)
                    .and_then(|m| m.parent().map(Path::to_path_buf))
                    .unwrap_or_else(|| workspace_root.clone())
            })
            .collect();
        let crate_items = crate_items(model, &types);
        let argv = build::cargo_argv(
            &harness_dir.join("Cargo.toml"),
            &target_dir,
            &config.cargo_args,
        );
        Ok(Preparation {
            model,
            config,
            types,
            package_dirs,
            manifests,
            crate_items,
            workspace_root,
            out_dir,
            harness_dir,
            runtime_dir,
            target_dir,
            argv,
            clocks,
        })
    }

    /// Every mutant of the types (`mutants.rs`).
    fn mutants(&self) -> Vec<crate::Mutant> {
        crate::mutants::generate(
            &self.types,
            |i, file| resolve_file(file, &self.package_dirs[i], &self.workspace_root),
            &self.workspace_root,
        )
    }

    /// The plan's cache key before the copy's fingerprint goes in: covcon's code, the model,
    /// the build command, the fixed instantiations, the runtime and `mutants`' schemas.
    fn key_hasher(
        &self,
        instantiations: &BTreeMap<String, Vec<String>>,
        mutants: &[crate::Mutant],
    ) -> DefaultHasher {
        let mut key_hasher = DefaultHasher::new();
        PLAN_SOURCES.hash(&mut key_hasher);
        serde_json::to_string(&self.model.types)
            .unwrap_or_default()
            .hash(&mut key_hasher);
        serde_json::to_string(&self.model.packages)
            .unwrap_or_default()
            .hash(&mut key_hasher);
        self.argv.hash(&mut key_hasher);
        instantiations.hash(&mut key_hasher);
        RUNTIME_FILES.hash(&mut key_hasher);
        PROTOCOL_FILES.hash(&mut key_hasher);
        // Every mutant's schema, also of those a saved plan leaves out as unviable: the copy's
        // fingerprint does not see a left-out schema, and a schema written differently (by a
        // newer covcon) must be compiled again rather than stay out.
        for i in mutants.iter().flat_map(|m| &m.schema) {
            (&i.file, i.line, i.column, &i.text).hash(&mut key_hasher);
        }
        key_hasher
    }

    /// What the copy inserts, but the insertions `disabled` leaves out: the clock's, the
    /// synchronisation sites', the crate items and the schema of `mutants`; those `blocking`
    /// names acquire without a non-blocking attempt ([`blocking_only`]).
    fn insertions(
        &self,
        mutants: &[crate::Mutant],
        disabled: &BTreeSet<(PathBuf, u32, u32)>,
        blocking: &BTreeSet<(PathBuf, u32, u32)>,
    ) -> Vec<Insertion> {
        let mut insertions = clock_first(
            clock_insertions(self.model, &self.manifests, &self.workspace_root, disabled),
            insertions(
                &self.types,
                &self.package_dirs,
                &self.workspace_root,
                disabled,
            ),
        );
        insertions.extend(self.crate_items.iter().cloned());
        with_schema(&mut insertions, mutants, disabled);
        for insertion in &mut insertions {
            if blocking.contains(&(insertion.file.clone(), insertion.key.0, insertion.key.1)) {
                if let Some(text) = blocking_only(&insertion.text) {
                    insertion.text = text;
                }
            }
        }
        insertions
    }

    /// Generates the harness of `state`'s plans and writes it, using the copy at `copy_root`.
    fn generate(
        &self,
        state: &mut State<'_>,
        copy_root: &Path,
        clock_patches: &[clocks::ClockPatch],
    ) -> Result<codegen::Generated, OracleError> {
        let unguarded = unguarded_methods(
            &self.types,
            &self.package_dirs,
            &self.workspace_root,
            &state.disabled,
        );
        let plans = state.plans(&self.types, &unguarded);
        let generated = codegen::harness(&plans);
        write_harness(
            &self.harness_dir,
            self.model,
            &self.types,
            &self.manifests,
            &self.workspace_root,
            copy_root,
            &self.runtime_dir,
            &generated,
            self.config,
            clock_patches,
        )?;
        Ok(generated)
    }
}

/// Whether a failed build failed in a dependency clock's patched copy (`clocks.rs`): an error
/// in its files, or cargo's own failure naming its directory.
fn fails_in_clocks(outcome: &build::BuildOutcome, out_dir: &Path) -> bool {
    let dir = out_dir.join(clocks::CLOCKS_DIR);
    outcome
        .errors
        .iter()
        .any(|e| e.places.iter().any(|(file, _)| file.starts_with(&dir)))
        || (outcome.errors.is_empty() && outcome.stderr.contains(&*dir.to_string_lossy()))
}

/// The error of a build that failed for good: rustc's errors, or cargo's output when there
/// are none.
fn build_error(outcome: &build::BuildOutcome) -> OracleError {
    let mut message: String = outcome
        .errors
        .iter()
        .map(|e| e.rendered.as_str())
        .collect::<Vec<_>>()
        .join("");
    if message.trim().is_empty() {
        message = outcome.stderr.clone();
    }
    OracleError::Build { message }
}

/// Adds the schema of every mutant not left out, and leaves out the synchronisation sites a
/// mutant's replacement covers (the replacement writes them its own way).
fn with_schema(
    insertions: &mut Vec<Insertion>,
    mutants: &[crate::Mutant],
    disabled: &BTreeSet<(PathBuf, u32, u32)>,
) {
    let on: Vec<&Insertion> = mutants
        .iter()
        .flat_map(|m| &m.schema)
        .filter(|i| !disabled.contains(&(i.file.clone(), i.key.0, i.key.1)))
        .collect();
    let covered = |i: &Insertion| {
        i.key.0 != 0
            && i.rank != Rank::Statement
            && on.iter().any(|r| {
                r.file == i.file
                    && r.end
                        .is_some_and(|end| (r.line, r.column) <= i.key && i.key < end)
            })
    };
    insertions.retain(|i| !covered(i));
    insertions.extend(on.into_iter().cloned());
    // The copy is what a user's `--test-cmd` builds, under the crate's own lint levels: a
    // `#![deny(warnings)]` crate would fail on the schema's parentheses (`(if on { .. } else
    // { .. })` as a tail or a `let`'s value). Each instrumented file allows that lint, on its
    // first line, so no line moves.
    if mutants.is_empty() {
        return;
    }
    let files: BTreeSet<PathBuf> = insertions.iter().map(|i| i.file.clone()).collect();
    for file in files {
        insertions.push(Insertion::statement(
            file,
            1,
            0,
            "#![allow(unused_parens)] ".to_string(),
        ));
    }
}

impl Harness {
    /// The mutants, and those left out of the schema (`State::unviable` is filled exactly
    /// when a mutant's key is disabled, and saved and restored with the plan).
    fn with_mutants(mut self, mutants: Vec<crate::Mutant>, state: &State) -> Harness {
        self.unviable = state.unviable.clone();
        self.mutants = mutants;
        self
    }
}

/// The harness executable's file name.
fn binary_name() -> String {
    format!("{}{}", codegen::HARNESS_NAME, std::env::consts::EXE_SUFFIX)
}

fn absolute_dir(path: &Path) -> Result<PathBuf, OracleError> {
    std::fs::create_dir_all(path)
        .map_err(|e| OracleError::io(format!("creating {}", path.display()), e))?;
    path.canonicalize()
        .map_err(|e| OracleError::io(format!("resolving {}", path.display()), e))
}

/// The runtime crate's sources, embedded so the harness can be built anywhere.
const RUNTIME_FILES: [(&str, &str); 10] = [
    ("Cargo.toml", include_str!("../runtime/Cargo.toml")),
    ("src/lib.rs", include_str!("../runtime/src/lib.rs")),
    ("src/hash.rs", include_str!("../runtime/src/hash.rs")),
    ("src/points.rs", include_str!("../runtime/src/points.rs")),
    ("src/sched.rs", include_str!("../runtime/src/sched.rs")),
    ("src/stuck.rs", include_str!("../runtime/src/stuck.rs")),
    ("src/sync.rs", include_str!("../runtime/src/sync.rs")),
    ("src/time.rs", include_str!("../runtime/src/time.rs")),
    ("src/value.rs", include_str!("../runtime/src/value.rs")),
    ("src/worker.rs", include_str!("../runtime/src/worker.rs")),
];

/// The sources of the protocol crate the runtime depends on, embedded the same way.
const PROTOCOL_FILES: [(&str, &str); 6] = [
    ("Cargo.toml", include_str!("../../protocol/Cargo.toml")),
    ("src/lib.rs", include_str!("../../protocol/src/lib.rs")),
    ("src/field.rs", include_str!("../../protocol/src/field.rs")),
    ("src/refs.rs", include_str!("../../protocol/src/refs.rs")),
    (
        "src/request.rs",
        include_str!("../../protocol/src/request.rs"),
    ),
    (
        "src/response.rs",
        include_str!("../../protocol/src/response.rs"),
    ),
];

/// The protocol crate's directory, beside the runtime's (`<out>/covcon-rt`).
const PROTOCOL_DIR: &str = "covcon-protocol";

/// Writes the runtime crate out, and beside it the protocol crate it depends on.
fn write_runtime(dir: &Path) -> Result<(), OracleError> {
    let protocol_dir = dir.with_file_name(PROTOCOL_DIR);
    for (dir, files) in [
        (&*protocol_dir, &PROTOCOL_FILES[..]),
        (dir, &RUNTIME_FILES[..]),
    ] {
        for (path, text) in files {
            let text = if *path == "Cargo.toml" {
                written_manifest(text)
            } else {
                text.to_string()
            };
            copy::write_if_changed(&dir.join(path), text.as_bytes())?;
        }
    }
    Ok(())
}

/// The manifest of a crate [`write_runtime`] writes out. It gets an empty `[workspace]`: it
/// lives under the user's target directory, and without one cargo takes the user's workspace
/// for the crate's and then fails to resolve the copy's `workspace = true` dependencies. The
/// runtime's dependency on the protocol crate names it where it is written, beside it.
fn written_manifest(text: &str) -> String {
    let mut manifest = match text.parse::<toml_edit::DocumentMut>() {
        Ok(doc) => doc,
        // An embedded manifest always parses (the tests write them out).
        Err(_) => return text.to_string(),
    };
    let protocol = manifest
        .get_mut("dependencies")
        .and_then(|deps| deps.get_mut("covcon-protocol"))
        .and_then(toml_edit::Item::as_inline_table_mut);
    if let Some(protocol) = protocol {
        protocol.insert("path", format!("../{PROTOCOL_DIR}").into());
    }
    format!("{manifest}\n# Written by cargo covcon.\n[workspace]\n")
}

/// The manifests (absolute, in the user's tree) of the packages defining `types`.
fn manifests(model: &Model, types: &[&TypeModel], workspace_root: &Path) -> BTreeSet<PathBuf> {
    types
        .iter()
        .filter_map(|ty| manifest_of(model, ty, workspace_root))
        .collect()
}

fn manifest_of(model: &Model, ty: &TypeModel, workspace_root: &Path) -> Option<PathBuf> {
    if let Some(package) = model.packages.iter().find(|p| p.name == ty.package) {
        return Some(copy::absolute(workspace_root, &package.manifest_path));
    }
    // Without package information: the nearest manifest above the type's file.
    let file = copy::absolute(workspace_root, &ty.span.file);
    file.ancestors()
        .skip(1)
        .take_while(|dir| dir.starts_with(workspace_root))
        .map(|dir| dir.join("Cargo.toml"))
        .find(|m| m.is_file())
}

/// `extern crate covcon_rt;` at the root of each edition-2015 package under test: there
/// `::covcon_rt::enter` names a path from the crate root, which only an `extern crate` item
/// fills (later editions find dependencies by name).
fn crate_items(model: &Model, types: &[&TypeModel]) -> Vec<Insertion> {
    model
        .packages
        .iter()
        .filter(|p| p.edition == "2015" && types.iter().any(|t| t.package == p.name))
        .filter_map(|p| {
            let at = p.first_item.as_ref()?;
            Some(Insertion::statement(
                at.file.clone(),
                at.line,
                at.column,
                "extern crate covcon_rt; ".to_string(),
            ))
        })
        .collect()
}

/// Guards at every method body, schedule points at the best split points, and the
/// synchronisation sites wrapped ([`site_insertions`]), at absolute paths. A relative span is
/// taken relative to its package's directory (as the analysis writes them), else to the
/// workspace root.
fn insertions(
    types: &[&TypeModel],
    package_dirs: &[PathBuf],
    workspace_root: &Path,
    disabled: &BTreeSet<(PathBuf, u32, u32)>,
) -> Vec<Insertion> {
    let mut out = Vec::new();
    let mut sources: BTreeMap<PathBuf, Option<String>> = BTreeMap::new();
    for (ty, package_dir) in types.iter().zip(package_dirs) {
        let resolve = |file: &Path| resolve_file(file, package_dir, workspace_root);
        for method in &ty.methods {
            if let Some(at) = &method.body_start {
                out.push(Insertion::statement(
                    resolve(&at.file),
                    at.line,
                    at.column,
                    format!(
                        "let __covcon_guard = ::covcon_rt::enter({:?}, {:?}); ",
                        ty.path, method.name
                    ),
                ));
            }
        }
        let points: Vec<&Span> = ty
            .split_points
            .iter()
            .take(SPLIT_POINTS_PER_TYPE)
            .map(|p| &p.at)
            .collect();
        for at in &points {
            out.push(Insertion::statement(
                resolve(&at.file),
                at.line,
                at.column,
                "::covcon_rt::schedule_point(); ".to_string(),
            ));
        }
        for site in &ty.sync_sites {
            if site.op == SyncOp::Container && !container_point(site, &points, &ty.sync_sites) {
                continue;
            }
            let file = resolve(&site.receiver.file);
            if let Some(source) = source_of(&mut sources, &file) {
                out.extend(site_insertions(site, &file, source));
            }
        }
    }
    drop_disabled(&mut out, disabled);
    out.sort_by(|a, b| {
        (&a.file, a.line, a.column, a.rank, &a.text)
            .cmp(&(&b.file, b.line, b.column, b.rank, &b.text))
    });
    out.dedup();
    out
}

/// The clock sites' insertions, then the others'. Where two wraps open at one position, the
/// one listed first goes outside, and a clock site that wraps a receiver
/// (`self.rx.lock().unwrap().recv_timeout(d)`, `x.elapsed()`) encloses whatever starts with
/// it (the `lock()` wrapped as a sync site); a sync site's receiver is a field, which never
/// starts with a clock site.
fn clock_first(mut clock: Vec<Insertion>, others: Vec<Insertion>) -> Vec<Insertion> {
    clock.extend(others);
    clock
}

/// Whether a call on a dependency's container gets a schedule point of its own: when another
/// site of its function comes before it (the window between two steps, lasso's key published
/// before its string), unless a split point's schedule point is on its line before it with no
/// other site in between (`let k = *self.map.entry(s)…` after the point at the `let`). A
/// function's first call has the point at the call's start before it; a point more would only
/// be a step more for the schedule to choose among, with nothing run between the two.
fn container_point(site: &SyncSite, points: &[&Span], sites: &[SyncSite]) -> bool {
    let at = |s: &Span| (s.line, s.column);
    let same_file = |s: &Span| s.file == site.receiver.file;
    let follows_a_site = sites.iter().any(|o| {
        o.method == site.method && same_file(&o.receiver) && at(&o.receiver) < at(&site.receiver)
    });
    let on_line = |s: &Span| same_file(s) && s.line == site.receiver.line;
    let just_after_point = points.iter().any(|p| {
        on_line(p)
            && p.column <= site.receiver.column
            && !sites.iter().any(|o| {
                on_line(&o.receiver)
                    && p.column <= o.receiver.column
                    && o.receiver.column < site.receiver.column
            })
    });
    follows_a_site && !just_after_point
}

/// The insertions that make a synchronisation site a schedule point: a lock acquisition
/// `self.m.lock()` becomes `::covcon_rt::acquire(&self.m, |l| l.try_lock(), |l| l.lock())`,
/// an attempt `self.m.try_lock()` becomes `::covcon_rt::attempt(&self.m, |l| l.try_lock())`,
/// an atomic operation `self.n.load(o)` becomes `::covcon_rt::at(&self.n).load(o)` (and a
/// container's call `self.map.insert(k, v)` `::covcon_rt::at(&self.map).insert(k, v)`), a
/// condition wait `self.cv.wait(g)` on `self.m`'s guard becomes `::covcon_rt::Cond(&self.cv,
/// &self.m).wait(g)`, a wait borrowing its guard `self.cv.wait(&mut g)` (parking_lot's)
/// `::covcon_rt::wait_mut(&self.cv, |c| { c.notify_all(); }, |c| c.wait(&mut g))`, and a
/// notify `::covcon_rt::notifying(&self.cv, false).notify_one()`. None when
/// the source at the site's positions is not such a call (a macro's tokens, a stale model).
fn site_insertions(site: &SyncSite, file: &Path, source: &str) -> Vec<Insertion> {
    let lines = copy::Lines::new(source);
    let start = (site.receiver.line, site.receiver.column);
    let (Some(receiver), Some(call)) = (
        lines.slice(start, site.receiver_end),
        lines.slice(site.receiver_end, site.call_end),
    ) else {
        return Vec::new();
    };
    let call: String = call.split_whitespace().collect();
    let plain_receiver = !receiver.trim().is_empty()
        && !receiver.contains([';', '{', '}'])
        && receiver.matches('(').count() == receiver.matches(')').count();
    let part = |(line, column): (u32, u32), text: &str, rank: Rank| Insertion {
        file: file.to_path_buf(),
        line,
        column,
        text: text.to_string(),
        rank,
        key: start,
        end: None,
    };
    match &site.op {
        SyncOp::Acquire { blocking, attempt }
            if plain_receiver && call == format!(".{blocking}()") =>
        {
            vec![
                part(start, "::covcon_rt::acquire(&", Rank::Open),
                part(
                    site.receiver_end,
                    &format!(", |__covcon_l| __covcon_l.{attempt}(), |__covcon_l| __covcon_l"),
                    Rank::Middle,
                ),
                part(site.call_end, ")", Rank::Close),
            ]
        }
        SyncOp::TimedAcquire { timed, attempt } if plain_receiver => {
            // `.try_lock_for(` up to its `(`, replaced; the call's own `)` closes the wrap.
            let head = format!(".{timed}(");
            let Some(open) = call_head_end(&lines, site.receiver_end, &head) else {
                return Vec::new();
            };
            // A deadline (`try_lock_until(t)`) goes to the runtime as one.
            let wrapper = if timed.ends_with("_until") {
                "::covcon_rt::acquire_until(&"
            } else {
                "::covcon_rt::acquire_for(&"
            };
            vec![
                part(start, wrapper, Rank::Open),
                Insertion {
                    end: Some(open),
                    ..part(
                        site.receiver_end,
                        &format!(
                            ", |__covcon_l| __covcon_l.{attempt}(), \
                             |__covcon_l, __covcon_d| __covcon_l.{timed}(__covcon_d), "
                        ),
                        Rank::Middle,
                    )
                },
            ]
        }
        SyncOp::Attempt { attempt } if plain_receiver && call == format!(".{attempt}()") => vec![
            part(start, "::covcon_rt::attempt(&", Rank::Open),
            part(site.receiver_end, ", |__covcon_l| __covcon_l", Rank::Middle),
            part(site.call_end, ")", Rank::Close),
        ],
        // `self.busy.compare_exchange(false, true, a, b)` becomes
        // `::covcon_rt::attempt(&self.busy, |l| l.compare_exchange(false, true, a, b))`.
        SyncOp::FlagAttempt
            if plain_receiver && call.starts_with(".compare_exchange") && call.ends_with(')') =>
        {
            vec![
                part(start, "::covcon_rt::attempt(&", Rank::Open),
                part(site.receiver_end, ", |__covcon_l| __covcon_l", Rank::Middle),
                part(site.call_end, ")", Rank::Close),
            ]
        }
        SyncOp::Atomic | SyncOp::Container
            if plain_receiver && call.starts_with('.') && call.ends_with(')') =>
        {
            vec![
                part(start, "::covcon_rt::at(&", Rank::Open),
                part(site.receiver_end, ")", Rank::Close),
            ]
        }
        SyncOp::Wait { lock } if plain_receiver && is_wait(&call) => vec![
            part(start, "::covcon_rt::Cond(&", Rank::Open),
            part(site.receiver_end, &format!(", &{lock})"), Rank::Close),
        ],
        SyncOp::WaitMut
            if plain_receiver && call.starts_with(".wait(&mut") && call.ends_with(')') =>
        {
            vec![
                part(start, "::covcon_rt::wait_mut(&", Rank::Open),
                part(
                    site.receiver_end,
                    ", |__covcon_c| { __covcon_c.notify_all(); }, |__covcon_c| __covcon_c",
                    Rank::Middle,
                ),
                part(site.call_end, ")", Rank::Close),
            ]
        }
        SyncOp::Notify { all, waited: true } if plain_receiver && call == notify_call(*all) => {
            vec![
                part(start, "::covcon_rt::notifying(&", Rank::Open),
                part(site.receiver_end, &format!(", {all})"), Rank::Close),
            ]
        }
        _ => Vec::new(),
    }
}

/// The clock sites of the packages under test (those whose manifest gets the runtime),
/// pointed at the runtime's virtual clock ([`clock_site_insertions`]).
fn clock_insertions(
    model: &Model,
    manifests: &BTreeSet<PathBuf>,
    workspace_root: &Path,
    disabled: &BTreeSet<(PathBuf, u32, u32)>,
) -> Vec<Insertion> {
    let mut out = Vec::new();
    for package in &model.packages {
        if !manifests.contains(&copy::absolute(workspace_root, &package.manifest_path)) {
            continue;
        }
        let mut sources: BTreeMap<PathBuf, Option<String>> = BTreeMap::new();
        for site in &package.clock_sites {
            let file = copy::absolute(workspace_root, &site.at.file);
            if let Some(source) = source_of(&mut sources, &file) {
                out.extend(clock_site_insertions(site, &file, source));
            }
        }
    }
    drop_disabled(&mut out, disabled);
    out
}

/// A file's text, read once per call of its reader (`None` when it cannot be read).
fn source_of<'s>(
    sources: &'s mut BTreeMap<PathBuf, Option<String>>,
    file: &Path,
) -> Option<&'s str> {
    sources
        .entry(file.to_path_buf())
        .or_insert_with(|| std::fs::read_to_string(file).ok())
        .as_deref()
}

/// Leaves out the insertions the copy did not compile with (by their key).
fn drop_disabled(out: &mut Vec<Insertion>, disabled: &BTreeSet<(PathBuf, u32, u32)>) {
    out.retain(|i| !disabled.contains(&(i.file.clone(), i.key.0, i.key.1)));
}

/// The insertions that make the copy read covcon's clock at a clock site: the called path
/// `Instant::now` becomes `::covcon_rt::time::now` (and so for `SystemTime::now` and
/// `thread::sleep`), and `x.elapsed()` becomes `::covcon_rt::time::elapsed(&(x))`. None when
/// the source at the site's positions is not such a call (a stale model).
fn clock_site_insertions(site: &ClockSite, file: &Path, source: &str) -> Vec<Insertion> {
    let lines = copy::Lines::new(source);
    let start = (site.at.line, site.at.column);
    let (Some(written), Some(rest)) = (
        lines.slice(start, site.end),
        lines.slice(site.end, site.call_end),
    ) else {
        return Vec::new();
    };
    let rest: String = rest.split_whitespace().collect();
    let path_like = !written.trim().is_empty() && !written.contains([';', '{', '}', '(']);
    // Open: an `elapsed` of `Instant::now()` opens its call where `now`'s path is replaced,
    // and the opening goes first (the two are in source order, the outer one first).
    let replace = |text: &str, from: (u32, u32), to: (u32, u32)| Insertion {
        file: file.to_path_buf(),
        line: from.0,
        column: from.1,
        text: text.to_string(),
        rank: Rank::Open,
        key: start,
        end: Some(to),
    };
    let function = match site.read {
        ClockRead::Now => "now",
        ClockRead::SystemNow => "system_now",
        ClockRead::Sleep => "sleep",
        ClockRead::ParkTimeout => "park_timeout",
        ClockRead::Elapsed => "elapsed",
        ClockRead::SystemElapsed => "system_elapsed",
        ClockRead::RecvTimeout => "recv_timeout",
        ClockRead::SpinLoop => "spin_loop",
        ClockRead::HashKeys => "random_state",
        ClockRead::Deadline => "deadline",
    };
    match site.read {
        ClockRead::SpinLoop if path_like && rest == "()" => {
            vec![replace("::covcon_rt::spin_loop", start, site.end)]
        }
        ClockRead::HashKeys if path_like && rest == "()" => {
            vec![replace("::covcon_rt::hash::random_state", start, site.end)]
        }
        ClockRead::Now | ClockRead::SystemNow | ClockRead::Sleep | ClockRead::ParkTimeout
            if path_like && rest.starts_with('(') =>
        {
            vec![replace(
                &format!("::covcon_rt::time::{function}"),
                start,
                site.end,
            )]
        }
        ClockRead::Elapsed | ClockRead::SystemElapsed if rest == ".elapsed()" => vec![
            Insertion {
                end: None,
                ..replace(&format!("::covcon_rt::time::{function}(&("), start, start)
            },
            Insertion {
                rank: Rank::Middle,
                ..replace("))", site.end, site.call_end)
            },
        ],
        // `rx.recv_timeout(d)` becomes `::covcon_rt::time::recv_timeout(&(rx), |r, d|
        // r.recv_timeout(d), d)`: `.recv_timeout(` replaced, the argument and `)` kept.
        ClockRead::RecvTimeout if rest.starts_with(".recv_timeout(") && rest.ends_with(')') => {
            let Some(open) = call_head_end(&lines, site.end, ".recv_timeout(") else {
                return Vec::new();
            };
            vec![
                Insertion {
                    end: None,
                    ..replace("::covcon_rt::time::recv_timeout(&(", start, start)
                },
                Insertion {
                    rank: Rank::Middle,
                    ..replace(
                        "), |__covcon_r, __covcon_d| __covcon_r.recv_timeout(__covcon_d), ",
                        site.end,
                        open,
                    )
                },
            ]
        }
        // `cv.wait_until(&mut g, cutoff)` becomes `cv.wait_until(&mut g,
        // ::covcon_rt::time::deadline(cutoff))`: the argument kept, wrapped. A last argument
        // that is not an `Instant` does not compile, and the copy is built without the site.
        ClockRead::Deadline if matches!(rest.as_str(), ")" | ",)") => vec![
            Insertion {
                end: None,
                ..replace("::covcon_rt::time::deadline(", start, start)
            },
            Insertion {
                rank: Rank::Middle,
                end: None,
                ..replace(")", site.end, site.end)
            },
        ],
        _ => Vec::new(),
    }
}

/// The position just after `head` (`.try_lock_for(`), written from `at` on one line with no
/// space inside it; `None` otherwise.
fn call_head_end(lines: &copy::Lines<'_>, at: (u32, u32), head: &str) -> Option<(u32, u32)> {
    let end = (at.0, at.1 + head.chars().count() as u32);
    (lines.slice(at, end)? == head).then_some(end)
}

/// Whether a call's text (white space removed) is a wait `covcon_rt::Cond` has.
fn is_wait(call: &str) -> bool {
    ["wait", "wait_timeout", "wait_while", "wait_timeout_while"]
        .iter()
        .any(|name| call.starts_with(&format!(".{name}(")))
        && call.ends_with(')')
}

fn notify_call(all: bool) -> &'static str {
    if all {
        ".notify_all()"
    } else {
        ".notify_one()"
    }
}

/// A span's file as an absolute path: relative ones are taken relative to their package's
/// directory (as the analysis writes them), else to the workspace root.
fn resolve_file(file: &Path, package_dir: &Path, workspace_root: &Path) -> PathBuf {
    if file.is_absolute() {
        return file.to_path_buf();
    }
    let in_package = package_dir.join(file);
    if in_package.exists() {
        in_package
    } else {
        workspace_root.join(file)
    }
}

/// Per type, the methods with no guard in their body: none could go there (`body_start` is
/// absent), or the copy did not compile with it. The harness stamps their calls instead.
fn unguarded_methods(
    types: &[&TypeModel],
    package_dirs: &[PathBuf],
    workspace_root: &Path,
    disabled: &BTreeSet<(PathBuf, u32, u32)>,
) -> Vec<BTreeSet<String>> {
    types
        .iter()
        .zip(package_dirs)
        .map(|(ty, package_dir)| {
            ty.methods
                .iter()
                .filter(|m| match &m.body_start {
                    None => true,
                    Some(at) => {
                        let file = resolve_file(&at.file, package_dir, workspace_root);
                        disabled.contains(&(file, at.line, at.column))
                    }
                })
                .map(|m| m.name.clone())
                .collect()
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn write_harness(
    harness_dir: &Path,
    model: &Model,
    types: &[&TypeModel],
    manifests: &BTreeSet<PathBuf>,
    workspace_root: &Path,
    copy_root: &Path,
    runtime_dir: &Path,
    generated: &codegen::Generated,
    config: &OracleConfig,
    clock_patches: &[clocks::ClockPatch],
) -> Result<(), OracleError> {
    let (features, default_features, all_features) = build::requested_features(&config.cargo_args);
    let mut packages = Vec::new();
    for manifest in manifests {
        let Some(dir) = manifest.parent() else {
            continue;
        };
        let name = package_name(model, types, manifest, workspace_root);
        let mut features = features.clone();
        if all_features {
            features.extend(declared_features(manifest));
        }
        packages.push(codegen::PackageDep {
            name,
            dir: copy::in_copy(workspace_root, copy_root, dir),
            features,
            default_features,
        });
    }
    let externs = extern_deps(model, generated, &packages, workspace_root, copy_root);
    let manifest =
        codegen::manifest(&packages, &externs, runtime_dir) + &clocks::patch_table(clock_patches);
    copy::write_if_changed(&harness_dir.join("Cargo.toml"), manifest.as_bytes())?;
    for (path, text) in &generated.files {
        copy::write_if_changed(&harness_dir.join(path), text.as_bytes())?;
    }
    // Driver files of types no longer in the harness.
    if let Ok(entries) = std::fs::read_dir(harness_dir.join("src")) {
        for entry in entries.filter_map(Result::ok) {
            let relative = format!("src/{}", entry.file_name().to_string_lossy());
            if !generated.files.contains_key(&relative) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
    let lock = harness_dir.join("Cargo.lock");
    let user_lock = workspace_root.join("Cargo.lock");
    if !lock.exists() && user_lock.exists() {
        let _ = std::fs::copy(user_lock, lock);
    }
    Ok(())
}

/// The dependencies of the packages under test that the generated code names by path.
fn extern_deps(
    model: &Model,
    generated: &codegen::Generated,
    packages: &[codegen::PackageDep],
    workspace_root: &Path,
    copy_root: &Path,
) -> Vec<codegen::ExternDep> {
    let mut named = BTreeSet::new();
    for text in generated.files.values() {
        named.extend(codegen::extern_crates(text));
    }
    let own: BTreeSet<String> = model
        .packages
        .iter()
        .map(|p| p.lib_name.clone())
        .chain(packages.iter().map(|p| p.name.replace('-', "_")))
        .collect();
    let mut out: Vec<codegen::ExternDep> = Vec::new();
    for name in named.difference(&own) {
        let found = model
            .packages
            .iter()
            .flat_map(|p| &p.dependencies)
            .find(|d| &d.extern_name == name);
        if let Some(d) = found {
            out.push(codegen::ExternDep {
                name: name.clone(),
                package: d.package.clone(),
                version: d.version.clone(),
                path: d
                    .path
                    .as_ref()
                    .map(|p| copy::in_copy(workspace_root, copy_root, p)),
            });
        }
    }
    out
}

fn package_name(
    model: &Model,
    types: &[&TypeModel],
    manifest: &Path,
    workspace_root: &Path,
) -> String {
    if let Some(p) = model
        .packages
        .iter()
        .find(|p| copy::absolute(workspace_root, &p.manifest_path) == manifest)
    {
        return p.name.clone();
    }
    types
        .iter()
        .find(|t| manifest_of(model, t, workspace_root).as_deref() == Some(manifest))
        .map(|t| t.package.clone())
        .unwrap_or_default()
}

fn declared_features(manifest: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(manifest) else {
        return Vec::new();
    };
    let Ok(value) = text.parse::<toml::Table>() else {
        return Vec::new();
    };
    value
        .get("features")
        .and_then(toml::Value::as_table)
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// The state of one preparation: instantiations tried, what is dropped.

/// What the last successful preparation decided, saved beside the harness.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct SavedPlan {
    key: u64,
    built: bool,
    candidate: Vec<usize>,
    dropped_types: BTreeMap<String, Reason>,
    skip_constructors: Vec<BTreeMap<String, String>>,
    skip_methods: Vec<BTreeMap<String, String>>,
    #[serde(default)]
    skip_values: Vec<BTreeMap<String, String>>,
    #[serde(default)]
    root_path: Vec<usize>,
    #[serde(default)]
    plain_flows: Vec<BTreeMap<String, String>>,
    disabled: Vec<(PathBuf, u32, u32)>,
    #[serde(default)]
    blocking: Vec<(PathBuf, u32, u32)>,
    #[serde(default)]
    unviable: BTreeMap<u32, String>,
    notes: Vec<Diagnostic>,
}

const PLAN_FILE: &str = "covcon-plan.json";

fn load_plan(harness_dir: &Path) -> Option<SavedPlan> {
    let text = std::fs::read_to_string(harness_dir.join(PLAN_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

struct State<'o> {
    overrides: &'o BTreeMap<String, Vec<String>>,
    /// Per type: which instantiation of its generics is tried ([`codegen::instantiate`]).
    candidate: Vec<usize>,
    /// Type path to why it is dropped.
    dropped_types: BTreeMap<String, Reason>,
    /// Per type: name to rustc's message.
    skip_constructors: Vec<BTreeMap<String, String>>,
    skip_methods: Vec<BTreeMap<String, String>>,
    /// Per type: `value path::constructor` to rustc's message.
    skip_values: Vec<BTreeMap<String, String>>,
    /// Per type: a method whose returned values are not passed along (built values instead)
    /// to rustc's message.
    plain_flows: Vec<BTreeMap<String, String>>,
    /// Types named by their crate-root re-export (`k::Type`), because the model's path goes
    /// through a private module.
    root_path: BTreeSet<usize>,
    /// Insertions left out because the copy did not compile with them.
    disabled: BTreeSet<(PathBuf, u32, u32)>,
    /// Wrapped acquisitions (and mutants re-acquiring a lock) on a lock that has no
    /// non-blocking attempt: written with `covcon_rt::acquire_blocking` ([`blocking_only`]).
    blocking: BTreeSet<(PathBuf, u32, u32)>,
    /// Mutants left out for the same reason, with rustc's message.
    unviable: BTreeMap<u32, String>,
    /// Diagnostics about insertions and instantiations.
    notes: Vec<Diagnostic>,
    /// Index into `types` of each plan of the last `plans` call.
    planned: Vec<usize>,
}

impl<'o> State<'o> {
    fn new(types: &[&TypeModel], overrides: &'o BTreeMap<String, Vec<String>>) -> State<'o> {
        State {
            overrides,
            candidate: vec![0; types.len()],
            dropped_types: BTreeMap::new(),
            skip_constructors: vec![BTreeMap::new(); types.len()],
            skip_methods: vec![BTreeMap::new(); types.len()],
            skip_values: vec![BTreeMap::new(); types.len()],
            plain_flows: vec![BTreeMap::new(); types.len()],
            root_path: BTreeSet::new(),
            disabled: BTreeSet::new(),
            blocking: BTreeSet::new(),
            unviable: BTreeMap::new(),
            notes: Vec::new(),
            planned: Vec::new(),
        }
    }

    /// A note about the whole preparation (no place in the user's code), once.
    fn note(&mut self, message: String) {
        if !self.notes.iter().any(|n| n.message == message) {
            self.notes.push(Diagnostic {
                severity: Severity::Note,
                message,
                span: None,
            });
        }
    }

    fn note_misplaced(&mut self, misplaced: &[Insertion]) {
        for insertion in misplaced {
            let message = format!(
                "the instrumentation `{}` points past the end of its line or file and is left out (is the model stale?)",
                insertion.text.trim()
            );
            if !self.notes.iter().any(|n| n.message == message) {
                self.notes.push(Diagnostic {
                    severity: Severity::Warning,
                    message,
                    span: Some(Span {
                        file: insertion.file.clone(),
                        line: insertion.line,
                        column: insertion.column,
                    }),
                });
            }
        }
    }

    /// Writes the acquisition of the instrumentation `insertion` is part of without its
    /// non-blocking attempt, the lock having none (a lock type of the crate's own): a site's
    /// wrap, or a mutant's re-acquisition of the lock it split. Answers whether that is new
    /// and changes its text; when it is not, the caller leaves the instrumentation out.
    fn block_only(&mut self, insertion: &Insertion, insertions: &[Insertion]) -> bool {
        let key = (insertion.file.clone(), insertion.key.0, insertion.key.1);
        let changes = insertions.iter().any(|i| {
            i.file == insertion.file && i.key == insertion.key && blocking_only(&i.text).is_some()
        });
        changes && self.blocking.insert(key)
    }

    /// Leaves out the instrumentation `insertion` is part of; answers whether it was in.
    fn disable(&mut self, insertion: &Insertion, error: &str) -> bool {
        let key = (insertion.file.clone(), insertion.key.0, insertion.key.1);
        if !self.disabled.insert(key) {
            return false;
        }
        if insertion.key.0 == 0 {
            // A mutant's schema: the mutant is unviable, which is no note about the copy.
            self.unviable.insert(insertion.key.1, error.to_string());
            return true;
        }
        let what = match insertion.rank {
            Rank::Statement => format!("`{}`", insertion.text.trim()),
            _ => "around this lock acquisition or atomic operation".to_string(),
        };
        self.notes.push(Diagnostic {
            severity: Severity::Note,
            message: format!(
                "the instrumentation {what} does not compile here and is left out: {error}"
            ),
            span: Some(Span {
                file: insertion.file.clone(),
                line: insertion.key.0,
                column: insertion.key.1,
            }),
        });
        true
    }

    /// Leaves out every wrapped synchronisation site: the last resort when the copy does not
    /// compile and no error could be put down to one insertion. Answers whether any was in.
    fn disable_sites(&mut self, insertions: &[Insertion]) -> bool {
        let mut progress = false;
        let sites = insertions
            .iter()
            .filter(|i| i.rank != Rank::Statement && i.key.0 != 0);
        for insertion in sites {
            let key = (insertion.file.clone(), insertion.key.0, insertion.key.1);
            progress |= self.disabled.insert(key);
        }
        if progress {
            self.notes.push(Diagnostic {
                severity: Severity::Note,
                message: "the copy did not compile with schedule points at its lock acquisitions and atomic operations; they are left out (controlled runs switch threads only at calls and split points)".to_string(),
                span: None,
            });
        }
        progress
    }

    fn restore(&mut self, saved: &SavedPlan) {
        if saved.candidate.len() == self.candidate.len() {
            self.candidate = saved.candidate.clone();
            self.dropped_types = saved.dropped_types.clone();
            self.skip_constructors = saved.skip_constructors.clone();
            self.skip_methods = saved.skip_methods.clone();
            if saved.skip_values.len() == self.candidate.len() {
                self.skip_values = saved.skip_values.clone();
            }
            if saved.plain_flows.len() == self.candidate.len() {
                self.plain_flows = saved.plain_flows.clone();
            }
            self.root_path = saved.root_path.iter().copied().collect();
            self.unviable = saved.unviable.clone();
            self.notes = saved.notes.clone();
        }
    }

    fn save(&self, harness_dir: &Path, key: u64) -> Result<(), OracleError> {
        let saved = SavedPlan {
            key,
            built: true,
            candidate: self.candidate.clone(),
            dropped_types: self.dropped_types.clone(),
            skip_constructors: self.skip_constructors.clone(),
            skip_methods: self.skip_methods.clone(),
            skip_values: self.skip_values.clone(),
            plain_flows: self.plain_flows.clone(),
            root_path: self.root_path.iter().copied().collect(),
            disabled: self.disabled.iter().cloned().collect(),
            blocking: self.blocking.iter().cloned().collect(),
            unviable: self.unviable.clone(),
            notes: self.notes.clone(),
        };
        let text = serde_json::to_string_pretty(&saved).unwrap_or_default();
        copy::write_if_changed(&harness_dir.join(PLAN_FILE), text.as_bytes())?;
        Ok(())
    }

    fn generic_args(&self, index: usize, ty: &TypeModel) -> Vec<String> {
        if ty.generics.is_empty() {
            return Vec::new();
        }
        if let Some(fixed) = self.overrides.get(&ty.path) {
            return with_fixed_types(&ty.generics, fixed);
        }
        codegen::instantiate(&ty.generics, self.candidate[index])
    }

    fn path_of(&self, index: usize, ty: &TypeModel) -> Option<String> {
        self.root_path.contains(&index).then(|| root_path(&ty.path))
    }

    /// Moves type `index` on to its next instantiation, which starts with nothing left out.
    fn next_candidate(&mut self, index: usize) {
        self.candidate[index] += 1;
        self.skip_constructors[index].clear();
        self.skip_methods[index].clear();
        self.skip_values[index].clear();
        self.plain_flows[index].clear();
    }

    fn can_try_next(&self, index: usize, ty: &TypeModel) -> bool {
        let has_type_params = ty
            .generics
            .iter()
            .any(|g| g.kind == GenericKind::Type && g.informative_default().is_none());
        has_type_params
            && !self.overrides.contains_key(&ty.path)
            && self.candidate[index] + 1 < codegen::attempts(&ty.generics)
    }

    fn plans<'m>(
        &mut self,
        types: &[&'m TypeModel],
        unguarded: &[BTreeSet<String>],
    ) -> Vec<TypePlan<'m>> {
        self.planned.clear();
        let mut plans = Vec::new();
        for (index, ty) in types.iter().enumerate() {
            if self.dropped_types.contains_key(&ty.path) {
                continue;
            }
            self.planned.push(index);
            plans.push(TypePlan {
                model: ty,
                generic_args: self.generic_args(index, ty),
                path: self.path_of(index, ty),
                skip_constructors: self.skip_constructors[index].keys().cloned().collect(),
                skip_methods: self.skip_methods[index].keys().cloned().collect(),
                skip_values: value_keys(&self.skip_values[index]),
                plain_flows: self.plain_flows[index].keys().cloned().collect(),
                stamp_methods: unguarded.get(index).cloned().unwrap_or_default(),
            });
        }
        plans
    }

    /// Takes in a failed build's errors; answers whether anything changed (so a new build
    /// can succeed where this one failed).
    #[allow(clippy::too_many_arguments)]
    fn absorb(
        &mut self,
        errors: &[CompileError],
        generated: &codegen::Generated,
        harness_dir: &Path,
        copy_root: &Path,
        workspace_root: &Path,
        insertions: &[Insertion],
        types: &[&TypeModel],
    ) -> bool {
        let mut progress = false;
        let mut type_errors: BTreeMap<usize, String> = BTreeMap::new();
        // Written blocking-only in this round: its other errors (an attempt's closure whose
        // type is then unknown) are the same cause's.
        let mut blocked = BTreeSet::new();
        for error in errors {
            if let Some(target) = harness_target(error, generated, harness_dir) {
                progress |= self.absorb_harness_error(target, error, types, &mut type_errors);
            } else {
                for insertion in copy_insertions(error, copy_root, workspace_root, insertions) {
                    let key = (insertion.file.clone(), insertion.key.0, insertion.key.1);
                    if blocked.contains(&key) {
                        continue;
                    }
                    if names_attempt(&error.message) && self.block_only(insertion, insertions) {
                        blocked.insert(key);
                        progress = true;
                    } else {
                        progress |= self.disable(insertion, &error.message);
                    }
                }
            }
        }
        self.note_no_constructor_compiles(types, &mut type_errors);
        for (index, reason) in type_errors {
            progress = true;
            self.absorb_type_error(index, types[index], reason);
        }
        progress
    }

    /// Takes in an error in the generated harness, in the entry of `target`: the constructor,
    /// method, kept handle or value constructor is left out (a method first tried again with
    /// built values); an error of the type's own code goes to `type_errors`, by index into
    /// `types`. Answers whether anything changed.
    fn absorb_harness_error(
        &mut self,
        target: Target,
        error: &CompileError,
        types: &[&TypeModel],
        type_errors: &mut BTreeMap<usize, String>,
    ) -> bool {
        let target = match target {
            // A private module in the path breaks every arm's import too.
            Target::Constructor(plan, _) | Target::Method(plan, _)
                if error.message.contains("is private")
                    && !matches!(&target, Target::Method(_, m) if MethodRef::parse(m).is_handle()) =>
            {
                Target::Type(plan)
            }
            target => target,
        };
        match target {
            Target::Type(plan) => {
                type_errors
                    .entry(self.planned[plan])
                    .or_insert_with(|| error.message.clone());
                false
            }
            Target::Constructor(plan, name) => {
                let index = self.planned[plan];
                self.skip_constructors[index]
                    .insert(name, error.message.clone())
                    .is_none()
            }
            Target::Method(plan, name) => {
                let index = self.planned[plan];
                self.absorb_method_error(types[index], index, name, &error.message)
            }
            Target::Handle(plan, from) => {
                let index = self.planned[plan];
                self.absorb_handle_error(types[index], index, &from, &error.message)
            }
            Target::Value(plan, path, name) => {
                let index = self.planned[plan];
                self.skip_values[index]
                    .insert(format!("{path}::{name}"), error.message.clone())
                    .is_none()
            }
        }
    }

    /// Takes in rustc's `message` about method `name` of `ty` (`types[index]`): a method
    /// passed a value another call returned, where it can be built too, is tried again with
    /// built values before it is left out. Answers whether anything changed.
    fn absorb_method_error(
        &mut self,
        ty: &TypeModel,
        index: usize,
        name: String,
        message: &str,
    ) -> bool {
        let mut progress = false;
        let flows: Vec<String> = ty
            .methods
            .iter()
            .filter(|m| m.name == name)
            .flat_map(|m| &m.params)
            .filter_map(|p| match &p.kind {
                ParamKind::Returned {
                    from, or: Some(_), ..
                } if !self.plain_flows[index].contains_key(from) => Some(from.clone()),
                _ => None,
            })
            .collect();
        if flows.is_empty() {
            progress |= self.skip_methods[index]
                .insert(name, message.to_string())
                .is_none();
        }
        for from in flows {
            self.plain_flows[index].insert(from, message.to_string());
            progress = true;
        }
        progress
    }

    /// Takes in rustc's `message` about keeping what method `from` of `ty` (`types[index]`)
    /// returns: the methods passed it get built values where they can, the others and the
    /// handle's methods are left out. Answers whether anything changed.
    fn absorb_handle_error(
        &mut self,
        ty: &TypeModel,
        index: usize,
        from: &str,
        message: &str,
    ) -> bool {
        let mut progress = false;
        for m in ty.methods.iter() {
            let kept_from_it = |built: bool| {
                m.params.iter().any(|p| {
                    matches!(&p.kind, ParamKind::Returned { from: f, or, .. }
                        if *f == from && or.is_some() == built)
                })
            };
            if kept_from_it(true) {
                progress |= self.plain_flows[index]
                    .insert(from.to_string(), message.to_string())
                    .is_none();
            }
            if kept_from_it(false) || m.via.as_ref().is_some_and(|v| v.from == from) {
                progress |= self.skip_methods[index]
                    .insert(m.name.clone(), message.to_string())
                    .is_none();
            }
        }
        progress
    }

    /// Adds to `type_errors` each type none of whose constructors compiles, as broken as a
    /// type-level error.
    fn note_no_constructor_compiles(
        &self,
        types: &[&TypeModel],
        type_errors: &mut BTreeMap<usize, String>,
    ) {
        for (index, ty) in types.iter().enumerate() {
            if self.dropped_types.contains_key(&ty.path) || type_errors.contains_key(&index) {
                continue;
            }
            let supported = ty.constructors.iter().filter(|c| c.supported());
            let all_failed = supported.clone().count() > 0
                && supported
                    .clone()
                    .all(|c| self.skip_constructors[index].contains_key(&c.name));
            if all_failed {
                let reason = self.skip_constructors[index]
                    .values()
                    .next()
                    .cloned()
                    .unwrap_or_default();
                type_errors.insert(index, format!("no constructor compiles: {reason}"));
            }
        }
    }

    /// Takes in an error of type `ty` (`types[index]`) as a whole: it is named by its
    /// crate-root path, or tried with its next instantiation, or else dropped.
    /// After a failed build whose errors named nothing to leave out: a boxed type argument
    /// (`Box<u32>`, tried first for a parameter the crate keeps in memory of its own) may be
    /// what a dependency refuses after monomorphisation, in its own source, where no entry of
    /// the harness is named (scc 3.8.8's `Shared<T>`: sdd asserts `!needs_drop::<T>()` in a
    /// constant). The types on a boxed argument that an error names (`scc::Shared::<..>`)
    /// move on to their next one, or every such type when none is named; answers whether any
    /// did.
    fn unbox(&mut self, types: &[&TypeModel], errors: &[CompileError]) -> bool {
        let boxed: Vec<usize> = (0..types.len())
            .filter(|&index| {
                let ty = types[index];
                !self.dropped_types.contains_key(&ty.path)
                    && !self.overrides.contains_key(&ty.path)
                    && codegen::boxed_attempt(&ty.generics, self.candidate[index])
                    && self.can_try_next(index, ty)
            })
            .collect();
        let named: Vec<usize> = boxed
            .iter()
            .copied()
            .filter(|&index| {
                let path = format!("{}::<", types[index].path);
                errors.iter().any(|e| e.rendered.contains(&path))
            })
            .collect();
        let chosen = if named.is_empty() { boxed } else { named };
        for &index in &chosen {
            self.next_candidate(index);
        }
        !chosen.is_empty()
    }

    fn absorb_type_error(&mut self, index: usize, ty: &TypeModel, reason: String) {
        let private = reason.contains("is private");
        if private && !self.root_path.contains(&index) && ty.path.matches("::").count() >= 2 {
            // `k::private::Type` may be re-exported as `k::Type`.
            self.root_path.insert(index);
            self.skip_constructors[index].clear();
            self.skip_methods[index].clear();
            self.skip_values[index].clear();
            self.plain_flows[index].clear();
        } else if self.can_try_next(index, ty) {
            self.next_candidate(index);
        } else {
            let args = self.generic_args(index, ty);
            let with = if args.is_empty() {
                String::new()
            } else {
                format!(" as `{}<{}>`", ty.name, args.join(", "))
            };
            // Its module is private (the root path was tried) and it is private or
            // unknown at the crate root too: only its own crate can name it.
            let unreachable = private
                || (self.root_path.contains(&index)
                    && ["cannot find", "could not find", "unresolved"]
                        .iter()
                        .any(|w| reason.contains(w)));
            let why = if unreachable {
                Reason::PrivateModule {
                    also: Some(Box::new(Reason::DoesNotCompile { error: reason })),
                }
            } else {
                Reason::DoesNotCompile {
                    error: format!("the harness cannot use it{with}: {reason}"),
                }
            };
            self.dropped_types.insert(ty.path.clone(), why);
        }
    }

    fn finish(
        &self,
        binary: PathBuf,
        build_secs: f64,
        cached: bool,
        copy_root: PathBuf,
        types: &[&TypeModel],
    ) -> Harness {
        let mut prepared = Vec::new();
        let mut diagnostics = self.notes.clone();
        for (index, ty) in types.iter().enumerate() {
            prepared.push(self.prepared_type(index, ty, &mut diagnostics));
        }
        Harness {
            binary,
            build_secs,
            cached,
            types: prepared,
            diagnostics,
            copy_root,
            mutants: Vec::new(),
            unviable: BTreeMap::new(),
        }
    }

    /// What the harness drives of `ty` (`types[index]`) and what it left out, each with a
    /// diagnostic in `diagnostics`.
    fn prepared_type(
        &self,
        index: usize,
        ty: &TypeModel,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> PreparedType {
        let args = self.generic_args(index, ty);
        let names = codegen::generic_names(&ty.generics);
        let instantiation = names
            .into_iter()
            .zip(args.iter().cloned())
            .filter(|(n, _)| !n.starts_with('\''))
            .collect();
        let plan = TypePlan {
            model: ty,
            generic_args: args.clone(),
            path: self.path_of(index, ty),
            skip_constructors: BTreeSet::new(),
            skip_methods: BTreeSet::new(),
            skip_values: BTreeSet::new(),
            plain_flows: BTreeSet::new(),
            stamp_methods: BTreeSet::new(),
        };
        let mut dropped = Vec::new();
        let type_reason = self.dropped_types.get(&ty.path).cloned().or_else(|| {
            (!ty.constructors.iter().any(|c| c.supported())).then_some(Reason::NoUsableConstructor)
        });
        if let Some(reason) = &type_reason {
            dropped.push(Dropped {
                kind: DroppedKind::Type,
                name: ty.path.clone(),
                reason: reason.clone(),
            });
            diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                message: format!("covcon cannot drive `{}`: {reason}", ty.path),
                span: Some(ty.span.clone()),
            });
        }
        let driven = type_reason.is_none();
        let constructors = ty.constructors.iter().map(|c| Member {
            name: &c.name,
            reason: c.reason.as_ref(),
            span: &ty.span,
        });
        let constructors = driven_members(
            constructors,
            &self.skip_constructors[index],
            (DroppedKind::Constructor, "constructor"),
            ty,
            driven,
            &mut dropped,
            diagnostics,
        );
        let methods = ty.methods.iter().map(|m| Member {
            name: &m.name,
            reason: m.reason.as_ref(),
            span: &m.span,
        });
        let methods = driven_members(
            methods,
            &self.skip_methods[index],
            (DroppedKind::Method, "method"),
            ty,
            driven,
            &mut dropped,
            diagnostics,
        );
        for scope in &ty.scopes {
            let Some(message) = self.skip_methods[index].get(&codegen::scope_key(&scope.from))
            else {
                continue;
            };
            let reason = not_compiling(message);
            diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                message: format!(
                    "the guard `{}` that `{}::{}` returns is not kept in scopes: {reason}",
                    scope.guard, ty.path, scope.from
                ),
                span: Some(ty.span.clone()),
            });
            dropped.push(Dropped {
                kind: DroppedKind::Scope,
                name: scope.from.clone(),
                reason,
            });
        }
        for (name, message) in &self.skip_values[index] {
            let reason = not_compiling(message);
            diagnostics.push(Diagnostic {
                severity: Severity::Warning,
                message: format!("value constructor `{name}` is left out: {reason}"),
                span: Some(ty.span.clone()),
            });
            dropped.push(Dropped {
                kind: DroppedKind::ValueConstructor,
                name: name.clone(),
                reason,
            });
        }
        for (from, message) in &self.plain_flows[index] {
            diagnostics.push(Diagnostic {
                severity: Severity::Note,
                message: format!(
                    "what `{}::{from}` returns is not passed to later calls (they get built values): {}",
                    ty.path,
                    not_compiling(message)
                ),
                span: Some(ty.span.clone()),
            });
        }
        PreparedType {
            path: ty.path.clone(),
            driven,
            concrete: codegen::concrete_type(&plan),
            instantiation,
            constructors,
            methods,
            dropped,
            plain_flows: self.plain_flows[index].keys().cloned().collect(),
        }
    }
}

/// A constructor or method of a type, as [`driven_members`] reads it.
struct Member<'m> {
    name: &'m str,
    /// Why the analysis does not test it, when it does not.
    reason: Option<&'m Reason>,
    span: &'m analysis::Span,
}

/// The members of `ty` the harness calls, none unless the type is `driven`; the others (not
/// supported by the analysis, or in `skip`, the ones that did not compile, by name) go to
/// `dropped` as `left_out.0`, with a warning in `diagnostics` naming them as `left_out.1` for
/// those the analysis supported.
fn driven_members<'m>(
    members: impl Iterator<Item = Member<'m>>,
    skip: &BTreeMap<String, String>,
    left_out: (DroppedKind, &str),
    ty: &TypeModel,
    driven: bool,
    dropped: &mut Vec<Dropped>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<String> {
    let (kind, word) = left_out;
    let mut called = Vec::new();
    for m in members {
        let analysed = m.reason.is_none();
        let reason = match m.reason {
            Some(reason) => Some(reason.clone()),
            None => skip.get(m.name).map(|r| not_compiling(r)),
        };
        match reason {
            Some(reason) => {
                if analysed {
                    diagnostics.push(Diagnostic {
                        severity: Severity::Warning,
                        message: format!("{word} `{}::{}` is left out: {reason}", ty.path, m.name),
                        span: Some(m.span.clone()),
                    });
                }
                dropped.push(Dropped {
                    kind,
                    name: m.name.to_string(),
                    reason,
                });
            }
            None if driven => called.push(m.name.to_string()),
            None => {}
        }
    }
    called
}

/// The generic arguments when the user fixed some: one per type parameter (lifetimes and
/// const generics are filled in as usual), or else the whole list as given.
fn with_fixed_types(generics: &[analysis::GenericParam], fixed: &[String]) -> Vec<String> {
    let is_type_param = |g: &analysis::GenericParam| g.kind == GenericKind::Type;
    if generics.iter().filter(|g| is_type_param(g)).count() != fixed.len() {
        return fixed.to_vec();
    }
    let mut fixed = fixed.iter();
    generics
        .iter()
        .zip(codegen::instantiate(generics, 0))
        .map(|(g, default)| match is_type_param(g) {
            true => fixed.next().cloned().unwrap_or(default),
            false => default,
        })
        .collect()
}

/// `path::ctor` keys split back into (value type path, constructor).
fn value_keys(skipped: &BTreeMap<String, String>) -> BTreeSet<(String, String)> {
    skipped
        .keys()
        .filter_map(|k| {
            let (path, ctor) = refs::value_constructor_parts(k)?;
            Some((path.to_string(), ctor.to_string()))
        })
        .collect()
}

/// `k::Type` for `k::m::Type`.
fn root_path(path: &str) -> String {
    let mut segments = path.split("::");
    let krate = segments.next().unwrap_or_default();
    let name = path.rsplit("::").next().unwrap_or_default();
    format!("{krate}::{name}")
}

/// Why a generated call does not compile, in the user's terms where covcon knows them.
fn not_compiling(rustc_message: &str) -> Reason {
    let error = if rustc_message.contains("FromArg") {
        format!("covcon cannot generate a value for one of its parameters ({rustc_message})")
    } else {
        format!("its generated call does not compile: {rustc_message}")
    };
    Reason::DoesNotCompile { error }
}

/// The dispatch entry an error points into, if it points into the generated harness.
fn harness_target(
    error: &CompileError,
    generated: &codegen::Generated,
    harness_dir: &Path,
) -> Option<Target> {
    for (file, line) in &error.places {
        let Ok(relative) = file.strip_prefix(harness_dir) else {
            continue;
        };
        let relative = relative.to_string_lossy().replace('\\', "/");
        // The most specific entry wins: constructor and method entries lie inside no other.
        if let Some(entry) = generated
            .entries
            .iter()
            .find(|e| e.file == relative && e.lines.0 <= *line && *line <= e.lines.1)
        {
            return Some(entry.target.clone());
        }
    }
    None
}

/// The insertions an error in the copy is most likely about: the nearest mutant's schema at
/// or before the error's line, else every wrapped synchronisation site with a part on the
/// error's line (columns in the copy are shifted by what was inserted
/// before them, lines are not), else the last insertion at or before the error's line in the
/// same file.
/// The non-blocking attempts a wrapped lock site calls (`harness::wrap`'s `|l| l.try_lock()`).
const ATTEMPTS: &[&str] = &["try_lock", "try_read", "try_write", "try_upgradable_read"];

/// Whether rustc's `message` is about one of the [`ATTEMPTS`] (`no method named `try_lock`
/// found for reference `&utils::Mutex<Inner>``).
fn names_attempt(message: &str) -> bool {
    ATTEMPTS.iter().any(|a| message.contains(&format!("`{a}`")))
}

/// `text` (a part of a wrapped acquisition, or a mutant's schema that re-acquires a lock)
/// with its acquisitions written without the non-blocking attempt:
/// `::covcon_rt::acquire(&m, |l| l.try_lock(), |l| l.lock())` becomes
/// `::covcon_rt::acquire_blocking(&m, |l| l.lock())`. `None` when it has no such acquisition.
fn blocking_only(text: &str) -> Option<String> {
    const OPEN: &str = "::covcon_rt::acquire(&";
    const ATTEMPT: &str = "|__covcon_l| __covcon_l.try_";
    // A timed acquisition's attempt stays: its lock has `try_lock_for`, so it has the attempt.
    let timed = [
        "__covcon_d",
        "::covcon_rt::acquire_for",
        "::covcon_rt::acquire_until",
    ];
    if (!text.contains(OPEN) && !text.contains(ATTEMPT)) || timed.iter().any(|t| text.contains(t)) {
        return None;
    }
    let mut out = text.replace(OPEN, "::covcon_rt::acquire_blocking(&");
    // Each attempt's closure up to the `, ` after its call's `()`.
    while let Some(start) = out.find(ATTEMPT) {
        let rest = &out[start + ATTEMPT.len()..];
        let call = rest.find("(), ")?;
        let end = start + ATTEMPT.len() + call + "(), ".len();
        out.replace_range(start..end, "");
    }
    Some(out)
}

fn copy_insertions<'i>(
    error: &CompileError,
    copy_root: &Path,
    workspace_root: &Path,
    insertions: &'i [Insertion],
) -> Vec<&'i Insertion> {
    for (file, line) in &error.places {
        let Ok(relative) = file.strip_prefix(copy_root) else {
            continue;
        };
        let original = workspace_root.join(relative);
        let in_file = || {
            insertions
                .iter()
                .filter(|i| copy::absolute(workspace_root, &i.file) == original)
        };
        let sites = || {
            in_file()
                .filter(|i| i.rank != Rank::Statement && i.key.0 != 0 && i.line == *line)
                .collect::<Vec<_>>()
        };
        // An attempt the wrapping of a lock site adds (`|l| l.try_lock()`) that the lock has
        // not (a lock type of the crate's own: crossbeam-channel's `utils::Mutex`) is the
        // site's fault, wherever the mutants are: blamed on the mutants above it, it made
        // 15 of crossbeam-channel's 40 mutants unviable.
        if names_attempt(&error.message) {
            let on_line = sites();
            if !on_line.is_empty() {
                return on_line;
            }
        }
        // A mutant's schema at or before the line is the likeliest culprit (the rest of the
        // instrumentation compiles without mutants), then a wrapped site on the line.
        let mutant = in_file()
            .filter(|i| i.key.0 == 0 && i.line <= *line)
            .max_by_key(|i| (i.line, i.column));
        if let Some(mutant) = mutant {
            return vec![mutant];
        }
        let on_line = sites();
        if !on_line.is_empty() {
            return on_line;
        }
        let best = in_file()
            .filter(|i| i.line <= *line)
            .max_by_key(|i| (i.line, i.column));
        if let Some(best) = best {
            return vec![best];
        }
    }
    Vec::new()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A build that fails inside a patched dependency clock is built again without the
    /// patches; one that fails elsewhere goes on to the copy's usual rounds.
    #[test]
    fn a_build_failing_in_a_patched_clock_is_told_from_one_failing_in_the_copy() {
        let out = Path::new("/t/covcon");
        let error = |file: &str| CompileError {
            places: vec![(PathBuf::from(file), 3)],
            message: "mismatched types".into(),
            rendered: String::new(),
        };
        let outcome = |errors: Vec<CompileError>, stderr: &str| build::BuildOutcome {
            success: false,
            errors,
            stderr: stderr.into(),
        };
        assert!(fails_in_clocks(
            &outcome(vec![error("/t/covcon/clocks/quanta-0.10.1/src/lib.rs")], ""),
            out
        ));
        assert!(!fails_in_clocks(
            &outcome(vec![error("/t/covcon/copy/src/lib.rs")], ""),
            out
        ));
        // Cargo's own failure (no rustc error) naming the patched package's directory.
        let resolution = "error: failed to load source for dependency `quanta`\n  \
                          Caused by: unable to update /t/covcon/clocks/quanta-0.10.1";
        assert!(fails_in_clocks(&outcome(vec![], resolution), out));
        assert!(!fails_in_clocks(
            &outcome(vec![], "error: no matching package"),
            out
        ));
    }

    /// A rustc error inside the copy is blamed on the mutant at or before its line, but one
    /// about the attempt a wrapped lock site adds (`try_lock` on a lock of the crate's own
    /// that has none) on the site on its line, whatever mutant comes before it.
    /// A lock with no attempt is acquired blocking: the site's wrap parts and a mutant's
    /// re-acquisition lose the attempt's closure; a timed acquisition and other text do not
    /// change.
    #[test]
    fn an_acquisition_without_its_attempt_keeps_the_blocking_call() {
        assert_eq!(
            blocking_only("::covcon_rt::acquire(&").as_deref(),
            Some("::covcon_rt::acquire_blocking(&")
        );
        assert_eq!(
            blocking_only(", |__covcon_l| __covcon_l.try_lock(), |__covcon_l| __covcon_l")
                .as_deref(),
            Some(", |__covcon_l| __covcon_l")
        );
        let schema = "let mut g = if ::covcon_rt::mutant(3) { drop(g); \
                      ::covcon_rt::acquire(&self.m, |__covcon_l| __covcon_l.try_write(), \
                      |__covcon_l| __covcon_l.write()) } else { g }; ";
        assert_eq!(
            blocking_only(schema).as_deref(),
            Some(
                "let mut g = if ::covcon_rt::mutant(3) { drop(g); \
                 ::covcon_rt::acquire_blocking(&self.m, |__covcon_l| __covcon_l.write()) } else { g }; "
            )
        );
        let timed = ", |__covcon_l| __covcon_l.try_lock(), \
                     |__covcon_l, __covcon_d| __covcon_l.try_lock_for(__covcon_d), ";
        assert_eq!(blocking_only(timed), None);
        assert_eq!(blocking_only("::covcon_rt::at(&"), None);
        assert_eq!(blocking_only(")"), None);
    }

    #[test]
    fn an_error_about_a_wrapped_sites_attempt_is_the_sites_not_the_mutant_above_it() {
        let root = Path::new("/w");
        let copy = Path::new("/w/target/covcon/copy");
        let insertion = |line: u32, key: (u32, u32), rank: Rank| Insertion {
            file: PathBuf::from("/w/src/zero.rs"),
            line,
            column: 8,
            text: String::new(),
            rank,
            key,
            end: None,
        };
        let insertions = vec![
            insertion(150, (0, 7), Rank::Wrap),
            insertion(226, (226, 8), Rank::Open),
            insertion(226, (226, 8), Rank::Close),
        ];
        let error = |message: &str| CompileError {
            places: vec![(PathBuf::from("/w/target/covcon/copy/src/zero.rs"), 226)],
            message: message.into(),
            rendered: String::new(),
        };
        let blamed = |message: &str| -> Vec<(u32, u32)> {
            copy_insertions(&error(message), copy, root, &insertions)
                .iter()
                .map(|i| i.key)
                .collect()
        };
        assert_eq!(
            blamed("no method named `try_lock` found for reference `&utils::Mutex<Inner>`"),
            vec![(226, 8), (226, 8)]
        );
        assert_eq!(blamed("borrow of moved value: `inner`"), vec![(0, 7)]);
    }

    /// Each crate written out is every file of its sources: a module left out of the list
    /// would fail only the harness's build.
    #[test]
    fn the_embedded_runtime_and_protocol_are_all_their_files() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        for (dir, files) in [
            (root.join("runtime"), &RUNTIME_FILES[..]),
            (root.join("../protocol"), &PROTOCOL_FILES[..]),
        ] {
            let mut on_disk: Vec<String> = std::fs::read_dir(dir.join("src"))
                .unwrap()
                .map(|entry| format!("src/{}", entry.unwrap().file_name().to_string_lossy()))
                .chain(["Cargo.toml".to_string()])
                .collect();
            on_disk.sort();
            let mut embedded: Vec<String> = files.iter().map(|(p, _)| p.to_string()).collect();
            embedded.sort();
            assert_eq!(embedded, on_disk, "{}", dir.display());
        }
    }

    /// Written out, the runtime names the protocol crate beside it, and each is a workspace
    /// of its own.
    #[test]
    fn the_written_runtime_depends_on_the_protocol_written_beside_it() {
        let runtime = written_manifest(RUNTIME_FILES[0].1);
        assert!(
            runtime.contains(r#"covcon-protocol = { path = "../covcon-protocol" }"#),
            "{runtime}"
        );
        let protocol = written_manifest(PROTOCOL_FILES[0].1);
        assert!(
            protocol.contains(r#"name = "covcon-protocol""#),
            "{protocol}"
        );
        for manifest in [runtime, protocol] {
            assert!(manifest.ends_with("\n[workspace]\n"), "{manifest}");
        }
    }

    /// The copy's text of `source` with its clock sites pointed at covcon's clock and its
    /// types' sync sites wrapped, in the build's order ([`clock_first`]); every insertion
    /// placed.
    fn instrumented(source: &str) -> String {
        let model = analysis::analyze_source("k", "2021", source);
        let file = PathBuf::from("src/lib.rs");
        let clock = model.packages[0]
            .clock_sites
            .iter()
            .flat_map(|site| clock_site_insertions(site, &file, source))
            .collect();
        let sync = model
            .types
            .iter()
            .flat_map(|t| &t.sync_sites)
            .flat_map(|site| site_insertions(site, &file, source))
            .collect();
        let insertions = clock_first(clock, sync);
        let refs: Vec<&Insertion> = insertions.iter().collect();
        let (text, missed) = copy::insert(source, &refs);
        assert!(missed.is_empty(), "{missed:?}");
        text
    }

    /// [`instrumented`] of a source without sync sites: its clock sites alone.
    fn check_clock(source: &str, expect: &str) {
        assert_eq!(instrumented(source), expect);
    }

    /// A timed receive on a receiver taken from a lock: the receive's wrap encloses the
    /// lock's.
    #[test]
    fn a_timed_receive_on_a_locked_receiver_wraps_the_lock_inside() {
        let source = "use std::sync::{mpsc::Receiver, Mutex};\n\
            pub struct M { rx: Mutex<Receiver<u8>> }\n\
            impl M {\n\
            pub fn take(&self) -> bool { self.rx.lock().unwrap().recv_timeout(D).is_ok() }\n\
            }\n";
        let text = instrumented(source);
        assert!(
            text.contains(
                "::covcon_rt::time::recv_timeout(&(::covcon_rt::acquire(&self.rx, \
                 |__covcon_l| __covcon_l.try_lock(), |__covcon_l| __covcon_l.lock()).unwrap()), \
                 |__covcon_r, __covcon_d| __covcon_r.recv_timeout(__covcon_d), D).is_ok()"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_spin_loop_hint_is_reported_to_the_worker() {
        check_clock(
            "fn f(b: &AtomicBool) { while !b.load(Acquire) { core::hint::spin_loop(); } }",
            "fn f(b: &AtomicBool) { while !b.load(Acquire) { ::covcon_rt::spin_loop(); } }",
        );
    }

    /// std's hash keys drawn by the copy are the test's (`covcon_rt::hash`).
    #[test]
    fn a_random_state_of_std_is_keyed_by_the_test() {
        check_clock(
            "use std::collections::hash_map::RandomState;\n\
             fn f() -> (RandomState, RandomState) { (RandomState::new(), RandomState::default()) }",
            "use std::collections::hash_map::RandomState;\n\
             fn f() -> (RandomState, RandomState) { (::covcon_rt::hash::random_state(), \
             ::covcon_rt::hash::random_state()) }",
        );
    }

    #[test]
    fn a_timed_receive_waits_on_covcons_clock() {
        let head = "use std::sync::mpsc::Receiver;\nstruct S { rx: Receiver<u8> }\n";
        check_clock(
            &format!("{head}impl S {{ fn f(&self) -> bool {{ self.rx.recv_timeout(D).is_ok() }} }}"),
            &format!(
                "{head}impl S {{ fn f(&self) -> bool {{ ::covcon_rt::time::recv_timeout(&(self.rx), \
                 |__covcon_r, __covcon_d| __covcon_r.recv_timeout(__covcon_d), D).is_ok() }} }}"
            ),
        );
    }

    /// A deadline given to parking_lot's timed wait is made real (sled 0.32's pool spun on a
    /// virtual one); the package's own `wait_until` keeps the virtual clock.
    #[test]
    fn a_deadline_given_to_a_dependency_is_made_real() {
        check_clock(
            "fn f(&self) { let r = self.cv.wait_until(&mut q, cutoff); }",
            "fn f(&self) { let r = self.cv.wait_until(&mut q, ::covcon_rt::time::deadline(cutoff)); }",
        );
        let own = "struct W;\nimpl W { fn wait_until(&self, t: u64) {} }\nfn f(w: &W) { w.wait_until(3); }";
        check_clock(own, own);
    }

    /// An acquisition that does not wait is wrapped so the run learns when it found the lock
    /// held; what follows it (`.ok()?`) stays outside the wrap.
    #[test]
    fn an_attempt_is_wrapped_so_the_run_says_when_it_found_the_lock_held() {
        let source = "use std::sync::Mutex;\n\
            pub struct T { n: Mutex<u64> }\n\
            impl T {\n\
            pub fn try_add(&self) -> Option<u64> { let mut n = self.n.try_lock().ok()?; *n += 1; Some(*n) }\n\
            }\n";
        let text = instrumented(source);
        assert!(
            text.contains(
                "let mut n = ::covcon_rt::attempt(&self.n, |__covcon_l| __covcon_l.try_lock()).ok()?;"
            ),
            "{text}"
        );
    }

    /// A call on a dependency's container is a schedule point (`at`) when it follows another
    /// site of its method: the window between two of them is where lasso's key was published
    /// before its string. Not the method's first call (`get`, `map.len`), and not one that a
    /// split point's schedule point just before it on its line already stops at.
    #[test]
    fn a_containers_call_after_another_site_is_a_point_unless_a_split_point_just_precedes_it() {
        let source = "use dashmap::DashMap;\nuse std::sync::atomic::{AtomicU32, Ordering};\n\
            pub struct I { map: DashMap<String, u32>, strings: DashMap<u32, String>, next: AtomicU32 }\n\
            impl I {\n\
            pub fn new() -> Self { I { map: DashMap::new(), strings: DashMap::new(), next: AtomicU32::new(0) } }\n\
            pub fn intern(&self, s: &str) -> u32 {\n\
            if let Some(k) = self.map.get(s) { return *k; }\n\
            let fresh = self.next.fetch_add(1, Ordering::SeqCst);\n\
            let key = *self.map.entry(s.to_string()).or_insert(fresh);\n\
            self.strings.insert(key, s.to_string()); key }\n\
            pub fn sizes(&self) -> (usize, usize) { (self.map.len(), self.strings.len()) }\n\
            }\n";
        let model = analysis::analyze_source("k", "2021", source);
        let types: Vec<&TypeModel> = model.types.iter().collect();
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/lib.rs"), source).unwrap();
        let root = dir.path().to_path_buf();
        let all = insertions(&types, std::slice::from_ref(&root), &root, &BTreeSet::new());
        let refs: Vec<&Insertion> = all.iter().collect();
        let (text, missed) = copy::insert(source, &refs);
        assert!(missed.is_empty(), "{missed:?}");
        let line = |n: usize| text.lines().nth(n - 1).unwrap().trim_start().to_string();
        let want = [
            "::covcon_rt::schedule_point(); if let Some(k) = self.map.get(s) {",
            "::covcon_rt::schedule_point(); let fresh = ::covcon_rt::at(&self.next).fetch_add(1, Ordering::SeqCst);",
            "::covcon_rt::schedule_point(); let key = *self.map.entry(s.to_string()).or_insert(fresh);",
            "::covcon_rt::schedule_point(); self.strings.insert(key, s.to_string());",
        ];
        for (n, want) in (7..).zip(want) {
            assert!(line(n).starts_with(want), "line {n}:\n{text}");
        }
        assert!(
            line(11).ends_with("(self.map.len(), ::covcon_rt::at(&self.strings).len()) }"),
            "{text}"
        );
    }

    #[test]
    fn a_timed_acquisition_is_wrapped_so_the_schedule_chooses_its_timeout() {
        let source = "use parking_lot::RwLock;\nuse std::time::Duration;\n\
            pub struct L { v: RwLock<Vec<u64>> }\n\
            impl L {\n\
            pub fn new() -> Self { L { v: RwLock::new(Vec::new()) } }\n\
            pub fn put(&self, x: u64) -> bool { match self.v.try_write_for(Duration::from_millis(1)) { Some(mut v) => { v.push(x); true } None => false } }\n\
            pub fn len(&self) -> usize { self.v.read().len() }\n\
            pub fn put_by(&self, x: u64, t: Instant) -> bool { match self.v.try_write_until(t) { Some(mut v) => { v.push(x); true } None => false } }\n\
            }\n";
        let text = instrumented(source);
        assert!(
            text.contains(
                "match ::covcon_rt::acquire_for(&self.v, |__covcon_l| __covcon_l.try_write(), \
                 |__covcon_l, __covcon_d| __covcon_l.try_write_for(__covcon_d), \
                 Duration::from_millis(1)) {"
            ),
            "{text}"
        );
        // A deadline goes to the runtime as one.
        assert!(
            text.contains(
                "match ::covcon_rt::acquire_until(&self.v, |__covcon_l| __covcon_l.try_write(), \
                 |__covcon_l, __covcon_d| __covcon_l.try_write_until(__covcon_d), t) {"
            ),
            "{text}"
        );
    }

    #[test]
    fn the_copy_reads_covcons_clock_where_the_code_reads_stds() {
        let head = "use std::time::Instant;\nstruct S { at: Instant }\n";
        check_clock(
            &format!(
                "{head}impl S {{ fn f(&self) -> u128 {{ std::thread::sleep(D); \
                 self.at.elapsed().as_nanos() + Instant::now().elapsed().as_nanos() }} }}"
            ),
            &format!(
                "{head}impl S {{ fn f(&self) -> u128 {{ ::covcon_rt::time::sleep(D); \
                 ::covcon_rt::time::elapsed(&(self.at)).as_nanos() + \
                 ::covcon_rt::time::elapsed(&(::covcon_rt::time::now())).as_nanos() }} }}"
            ),
        );
    }

    /// A harness of one prepared type, built by no build.
    fn harness_of(prepared: PreparedType) -> Harness {
        Harness {
            binary: PathBuf::new(),
            build_secs: 0.0,
            cached: false,
            mutants: Vec::new(),
            unviable: BTreeMap::new(),
            types: vec![prepared],
            diagnostics: vec![],
            copy_root: PathBuf::new(),
        }
    }

    #[test]
    fn the_drivable_model_marks_what_was_dropped_and_keeps_only_callable_pairs() {
        let method = |name: &str| analysis::Method {
            name: name.into(),
            ..Default::default()
        };
        let pair = |a: &str, b: &str| analysis::Pair {
            methods: [a.into(), b.into()],
            ..Default::default()
        };
        let ty = TypeModel {
            path: "k::Pool".into(),
            methods: vec![method("get"), method("resize")],
            pairs: vec![
                pair("get", "get"),
                pair("get", "resize"),
                pair("resize", "resize"),
            ],
            ..Default::default()
        };
        let model = Model {
            types: vec![ty],
            ..Default::default()
        };
        let harness = harness_of(PreparedType {
            path: "k::Pool".into(),
            driven: true,
            concrete: "::k::Pool".into(),
            instantiation: BTreeMap::new(),
            constructors: vec![],
            methods: vec!["get".into()],
            dropped: vec![Dropped {
                kind: DroppedKind::Method,
                name: "resize".into(),
                reason: Reason::DoesNotCompile {
                    error: "it does not compile".into(),
                },
            }],
            plain_flows: BTreeSet::new(),
        });
        let drivable = harness.drivable_model(&model);
        let ty = &drivable.types[0];
        let methods: Vec<String> = ty
            .methods
            .iter()
            .map(|m| {
                let reason = m.reason.as_ref().map(|r| r.to_string());
                format!("{} {} {reason:?}", m.name, m.supported())
            })
            .collect();
        let pairs: Vec<String> = ty.pairs.iter().map(|p| p.methods.join("+")).collect();
        assert_eq!(
            format!("{methods:?} {pairs:?}"),
            r#"["get true None", "resize false Some(\"it does not compile\")"] ["get+get"]"#
        );
    }

    #[test]
    fn a_parameter_whose_kept_values_did_not_compile_takes_built_ones() {
        let returned = |from: &str, by_ref: bool| ParamKind::Returned {
            from: from.into(),
            ty: "Grant".into(),
            shape: analysis::ReturnShape::OptionSelf,
            by_ref,
            or: Some(Box::new(ParamKind::Value {
                path: "k::Grant".into(),
            })),
        };
        let method = |name: &str, kind: ParamKind| analysis::Method {
            name: name.into(),
            params: vec![analysis::Param {
                name: "grant".into(),
                ty: "Grant".into(),
                kind,
            }],
            ..Default::default()
        };
        let model = Model {
            types: vec![TypeModel {
                path: "k::Table".into(),
                methods: vec![
                    method("revoke", returned("grant", false)),
                    method("is_current", returned("grant", true)),
                    method("renew", returned("lease", false)),
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        let harness = harness_of(PreparedType {
            path: "k::Table".into(),
            driven: true,
            concrete: "::k::Table".into(),
            instantiation: BTreeMap::new(),
            constructors: vec![],
            methods: vec!["revoke".into(), "is_current".into(), "renew".into()],
            dropped: vec![],
            plain_flows: BTreeSet::from(["grant".to_string()]),
        });
        let drivable = harness.drivable_model(&model);
        let kinds: Vec<&ParamKind> = drivable.types[0]
            .methods
            .iter()
            .map(|m| &m.params[0].kind)
            .collect();
        let built = ParamKind::Value {
            path: "k::Grant".into(),
        };
        assert_eq!(
            kinds,
            [
                &built,
                &ParamKind::Ref {
                    inner: Box::new(built.clone())
                },
                &returned("lease", false),
            ]
        );
    }

    #[test]
    fn fixed_generic_arguments_name_the_type_parameters_only() {
        let param = |name: &str, kind: GenericKind| analysis::GenericParam {
            name: name.into(),
            kind,
            written: name.into(),
            ..Default::default()
        };
        let generics = [
            param("'a", GenericKind::Lifetime),
            param("K", GenericKind::Type),
            param("N", GenericKind::Const),
            param("V", GenericKind::Type),
        ];
        let fixed = ["String", "u8"].map(String::from);
        assert_eq!(
            with_fixed_types(&generics, &fixed),
            ["'static", "String", "4", "u8"]
        );
        let all = ["'static", "u64", "2", "u8"].map(String::from);
        assert_eq!(with_fixed_types(&generics, &all), all);
    }

    #[test]
    fn instantiation_kinds_follow_the_chosen_types() {
        let prepared = PreparedType {
            path: "k::Cache".into(),
            driven: true,
            concrete: "::k::Cache<u32, String>".into(),
            instantiation: BTreeMap::from([
                ("K".into(), "u32".into()),
                ("V".into(), "String".into()),
            ]),
            constructors: vec![],
            methods: vec![],
            dropped: vec![],
            plain_flows: BTreeSet::new(),
        };
        let kinds = prepared.instantiation_kinds(&[]);
        assert_eq!(
            kinds["K"],
            ParamKind::Int {
                signed: false,
                bits: 32
            }
        );
        assert_eq!(kinds["V"], ParamKind::String);
    }
}
