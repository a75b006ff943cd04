//! Prints the model of one source file as JSON and as the terminal summary:
//! `cargo run -p covcon-analysis --example analyze_file -- path/to/lib.rs [edition]`.

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: analyze_file FILE [EDITION]");
        std::process::exit(2);
    };
    let edition = args.next().unwrap_or_else(|| "2021".into());
    let text = std::fs::read_to_string(&path).expect("readable file");
    let model = analysis::analyze_source("demo", &edition, &text);
    println!(
        "{}",
        serde_json::to_string_pretty(&model).expect("serialisable")
    );
    println!("{}", analysis::summary(&model));
}
