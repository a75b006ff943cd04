//! Slots that keep a value in `MaybeUninit`: covcon boxes the values of their type parameter
//! (`Box<u32>`), so that a value read out twice is freed twice, unless the type refuses one
//! that needs dropping, as `PlainSlot` does in a constant (sdd's `Shared` does so).

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};

/// One value at most.
pub struct Slot<T> {
    full: AtomicBool,
    value: UnsafeCell<MaybeUninit<T>>,
}

unsafe impl<T: Send> Sync for Slot<T> {}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Slot<T> {
    pub fn new() -> Self {
        Slot {
            full: AtomicBool::new(false),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// Puts `v` in an empty slot; false (and `v` dropped) when it is full.
    pub fn put(&self, v: T) -> bool {
        if self.full.swap(true, Ordering::AcqRel) {
            return false;
        }
        unsafe { (*self.value.get()).write(v) };
        true
    }

    pub fn is_full(&self) -> bool {
        self.full.load(Ordering::Acquire)
    }
}

impl<T> Drop for Slot<T> {
    fn drop(&mut self) {
        if *self.full.get_mut() {
            unsafe { self.value.get_mut().assume_init_drop() };
        }
    }
}

/// A slot for values that need no dropping: building one with any other fails to compile.
pub struct PlainSlot<T> {
    full: AtomicBool,
    value: UnsafeCell<MaybeUninit<T>>,
}

unsafe impl<T: Send> Sync for PlainSlot<T> {}

impl<T> PlainSlot<T> {
    const PLAIN: () = assert!(!std::mem::needs_drop::<T>());

    pub fn new() -> Self {
        #[allow(clippy::let_unit_value)]
        let () = Self::PLAIN;
        PlainSlot {
            full: AtomicBool::new(false),
            value: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    /// Puts `v` in an empty slot; false when it is full.
    pub fn put(&self, v: T) -> bool {
        if self.full.swap(true, Ordering::AcqRel) {
            return false;
        }
        unsafe { (*self.value.get()).write(v) };
        true
    }

    pub fn is_full(&self) -> bool {
        self.full.load(Ordering::Acquire)
    }
}
