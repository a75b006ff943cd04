//! `cargo covcon`: the command line, the campaign and the reports.

fn main() {
    println!("cargo covcon: not built yet");
}
