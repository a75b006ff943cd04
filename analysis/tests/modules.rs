//! Reading a library's module tree from disk: `mod x;` as `x.rs` or `x/mod.rs`, nested
//! modules of a non-`mod.rs` file in its own directory, `#[path]`, `#[cfg(test)]` skipped, and
//! a missing or broken file reported while the rest is analysed.

use analysis::{analyze, Config, PackageInfo};
use std::path::Path;

const COUNTER: &str = "pub struct C { n: std::sync::atomic::AtomicU32 }\nimpl C { pub fn new() -> Self { todo!() } pub fn get(&self) -> u32 { 0 } }\n";

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().expect("a parent")).expect("dirs");
    std::fs::write(p, text).expect("write");
}

/// The analysis of a temporary crate laid out from `files` (path, text), and its directory.
fn model_of(files: &[(&str, &str)]) -> (tempfile::TempDir, analysis::Model) {
    let dir = tempfile::tempdir().expect("tempdir");
    for (rel, text) in files {
        write(dir.path(), rel, text);
    }
    let pkg = PackageInfo {
        name: "tree".into(),
        lib_name: "tree".into(),
        manifest_path: dir.path().join("Cargo.toml"),
        lib_root: dir.path().join("src/lib.rs"),
        edition: "2021".into(),
        ..Default::default()
    };
    let model = analyze(&[pkg], &Config::default());
    (dir, model)
}

/// Lays out `files` (path, text) under a temporary crate and renders the type paths and
/// diagnostics of the analysis, with the directory replaced by `$DIR`.
fn check(files: &[(&str, &str)], expect: &str) {
    let (dir, model) = model_of(files);
    let mut got = String::new();
    for t in &model.types {
        let file = t
            .span
            .file
            .strip_prefix(dir.path())
            .unwrap_or(&t.span.file)
            .display()
            .to_string();
        got.push_str(&format!("{} in {file}\n", t.path));
    }
    for d in &model.diagnostics {
        got.push_str(&format!(
            "{:?}: {}\n",
            d.severity,
            d.message.replace(&dir.path().display().to_string(), "$DIR")
        ));
    }
    let want: String = expect
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(got, want);
}

#[test]
fn modules_are_found_in_flat_nested_and_path_attribute_files() {
    check(
        &[
            ("src/lib.rs", "pub mod a;\npub mod b;\n#[path = \"elsewhere/c_impl.rs\"]\npub mod c;\n#[cfg(test)]\nmod tests;\n"),
            ("src/a.rs", &format!("pub mod inner;\n{COUNTER}")),
            ("src/a/inner.rs", COUNTER),
            ("src/b/mod.rs", &format!("pub mod deep {{ pub mod leaf; }}\n{COUNTER}")),
            ("src/b/deep/leaf.rs", COUNTER),
            ("src/elsewhere/c_impl.rs", COUNTER),
            ("src/tests.rs", COUNTER),
        ],
        "tree::a::C in src/a.rs
         tree::a::inner::C in src/a/inner.rs
         tree::b::C in src/b/mod.rs
         tree::b::deep::leaf::C in src/b/deep/leaf.rs
         tree::c::C in src/elsewhere/c_impl.rs",
    );
}

#[test]
fn modules_declared_inside_item_macros_are_read_and_the_unreadable_ones_are_named() {
    check(
        &[
            (
                "src/lib.rs",
                "macro_rules! modules { ($($m:ident),*) => { $(pub mod $m;)* }; }
                 cfg_if::cfg_if! { if #[cfg(windows)] { pub mod w; } else { pub mod a; } }
                 modules!(b, c);
                 #[cfg(feature = \"off\")] pub mod d;
                 weird! { c => mod e; mod f; }",
            ),
            ("src/a.rs", COUNTER),
            ("src/b.rs", COUNTER),
            ("src/c.rs", COUNTER),
            ("src/d.rs", COUNTER),
            ("src/w.rs", COUNTER),
        ],
        "tree::a::C in src/a.rs
         tree::b::C in src/b.rs
         tree::c::C in src/c.rs
         Error: 2 modules declared inside `weird!` were not read: covcon cannot expand that macro (`e`, `f`)",
    );
}

#[test]
fn a_macro_defined_in_a_module_read_later_is_expanded_where_it_is_used() {
    check(
        &[
            (
                "src/lib.rs",
                "#[macro_use] mod macros;\n with_std! { pub mod pool; }",
            ),
            (
                "src/macros.rs",
                "macro_rules! with_std { ($($i:item)*) => { $(#[cfg(not(feature = \"no_std\"))] $i)* }; }",
            ),
            ("src/pool.rs", COUNTER),
        ],
        "tree::pool::C in src/pool.rs",
    );
}

#[test]
fn a_missing_module_file_and_a_broken_file_are_diagnostics_and_the_rest_is_analysed() {
    check(
        &[
            ("src/lib.rs", &format!("pub mod gone;\npub mod broken;\n{COUNTER}")),
            ("src/broken.rs", "pub fn f( {"),
        ],
        "tree::C in src/lib.rs
         Warning: module `gone` declared in $DIR/src/lib.rs has no file gone.rs or gone/mod.rs; skipped
         Error: cannot parse $DIR/src/broken.rs: cannot parse string into token stream; its types are not analysed",
    );
}

#[test]
fn the_type_filter_keeps_types_named_by_bare_name_or_full_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(
        dir.path(),
        "src/lib.rs",
        &format!("pub mod a;\npub mod b;\n{COUNTER}"),
    );
    write(dir.path(), "src/a.rs", COUNTER);
    write(dir.path(), "src/b.rs", &COUNTER.replace("C", "D"));
    let pkg = PackageInfo {
        name: "tree".into(),
        lib_name: "tree".into(),
        manifest_path: dir.path().join("Cargo.toml"),
        lib_root: dir.path().join("src/lib.rs"),
        edition: "2021".into(),
        ..Default::default()
    };
    let paths = |types: &[&str]| -> Vec<String> {
        let config = Config {
            types: types.iter().map(|s| s.to_string()).collect(),
            ..Config::default()
        };
        analyze(std::slice::from_ref(&pkg), &config)
            .types
            .into_iter()
            .map(|t| t.path)
            .collect()
    };
    assert_eq!(paths(&[]), ["tree::C", "tree::a::C", "tree::b::D"]);
    assert_eq!(paths(&["C"]), ["tree::C", "tree::a::C"]);
    assert_eq!(paths(&["tree::a::C", "D"]), ["tree::a::C", "tree::b::D"]);
}

/// A file of constants only (mini-moka's `common/concurrent/constants.rs`) holds nothing the
/// analysis needs but the sizes other files' code names: it is read for them.
#[test]
fn a_file_of_constants_only_gives_the_sizes_other_files_name() {
    let (_dir, model) = model_of(&[
        (
            "src/lib.rs",
            "mod constants;\nmod log;\npub struct Cache { log: log::Log }\nimpl Cache { pub fn new() -> Self { todo!() } pub fn get(&self) { self.log.record() } }\n",
        ),
        (
            "src/constants.rs",
            "pub(crate) const FLUSH_POINT: usize = 64;\npub(crate) const UNUSED: usize = 1000;\n",
        ),
        (
            "src/log.rs",
            "use crate::constants::FLUSH_POINT;\npub(crate) struct Log { n: std::sync::atomic::AtomicUsize }\nimpl Log { pub(crate) fn record(&self) { if self.n.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= FLUSH_POINT {} } }\n",
        ),
    ]);
    let cache = model
        .types
        .iter()
        .find(|t| t.name == "Cache")
        .expect("Cache");
    assert_eq!(cache.constants, [64]);
}

/// Functions declared by a macro inside an impl block are read: the crate's own
/// `macro_rules!` expanded (concurrent-queue's `const_fn!` declares `unbounded()`, a `const
/// fn` unless `loom` is set), another macro's body taken when it reads as impl items.
#[test]
fn functions_declared_by_macros_inside_impl_blocks_are_read() {
    let lib = "macro_rules! const_fn {
            (const_if: #[cfg($($cfg:tt)+)]; $(#[$($attr:tt)*])* $vis:vis const fn $($rest:tt)*) => {
                #[cfg($($cfg)+)] $(#[$($attr)*])* $vis const fn $($rest)*
                #[cfg(not($($cfg)+))] $(#[$($attr)*])* $vis fn $($rest)*
            };
        }
        pub struct Q { n: std::sync::atomic::AtomicU32 }
        impl Q {
            pub fn bounded(cap: usize) -> Q { todo!() }
            const_fn!(
                const_if: #[cfg(not(loom))];
                /// An unbounded queue.
                pub const fn unbounded() -> Q { todo!() }
            );
            pub fn len(&self) -> usize { 0 }
            const_fn!(
                const_if: #[cfg(not(loom))];
                pub const fn get(&self) -> u32 { 0 }
            );
            other::wrap! { pub fn peek(&self) -> u32 { 0 } }
        }";
    let (_dir, model) = model_of(&[("src/lib.rs", lib)]);
    let q = &model.types[0];
    let constructors: Vec<&str> = q.constructors.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(constructors, ["bounded", "unbounded"]);
    let methods: Vec<&str> = q.methods.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(methods, ["len", "get", "peek"]);
}
