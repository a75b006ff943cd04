//! Thread-safe types behind the obstacles covcon met on published crates: modules declared
//! inside item macros (`cfg_if!` and a wrapper of the crate's own), a wrapper type whose
//! synchronisation is two types deep or in a dependency, default type parameters from another
//! module, a constructor that takes an options struct, generic methods, trait methods, and
//! methods that take a guard the type hands out.

/// Declares modules and re-exports everything they define (a wrapper many crates write).
macro_rules! modules {
    ($($name:ident),* $(,)?) => { $( mod $name; pub use self::$name::*; )* };
}

cfg_if::cfg_if! {
    if #[cfg(windows)] {
        mod windows_counter;
        pub use windows_counter::Counter;
    } else {
        mod counter;
        pub use counter::Counter;
    }
}

modules!(wrapper, meter, pool, interner, stats, epoch, slots, channel);

mod keys;
pub use keys::Key;

/// A trait users import from here; `Stats` implements it in another module.
pub mod export {
    pub trait Export {
        fn export(&self) -> String;
        /// A default method the impl does not override.
        fn export_len(&self) -> usize {
            self.export().len()
        }
    }
}
