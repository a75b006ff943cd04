//! Helpers the analysis tests share.

/// The text between two (1-based line, 0-based character column) positions of `source`,
/// white space collapsed.
pub fn slice(source: &str, from: (u32, u32), to: (u32, u32)) -> String {
    let offset = |(line, column): (u32, u32)| -> usize {
        let start: usize = source
            .split_inclusive('\n')
            .take(line as usize - 1)
            .map(str::len)
            .sum();
        let text = &source[start..];
        text.char_indices()
            .nth(column as usize)
            .map_or(text.len(), |(i, _)| i)
            + start
    };
    let text = &source[offset(from)..offset(to)];
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
