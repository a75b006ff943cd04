use std::sync::atomic::{AtomicU64, Ordering};

/// What a meter is called; built before the meter.
pub struct MeterOpts {
    name: String,
    help: String,
}

impl MeterOpts {
    pub fn new(name: impl Into<String>, help: &str) -> MeterOpts {
        MeterOpts {
            name: name.into(),
            help: help.to_string(),
        }
    }
}

/// A meter only an options struct can build.
pub struct Meter {
    opts: MeterOpts,
    value: AtomicU64,
}

impl Meter {
    pub fn with_opts(opts: MeterOpts) -> Meter {
        Meter {
            opts,
            value: AtomicU64::new(0),
        }
    }
    pub fn inc_by(&self, by: u64) {
        self.value.fetch_add(by, Ordering::Relaxed);
    }
    pub fn get(&self) -> u64 {
        self.value.load(Ordering::Relaxed)
    }
    pub fn describe(&self) -> String {
        format!("{}: {}", self.opts.name, self.opts.help)
    }
}
