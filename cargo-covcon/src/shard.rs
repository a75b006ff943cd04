//! `--shard K/N`: which types this CI job tests.
//!
//! Types are sorted by path and dealt round-robin, so shards differ in size by at most one
//! type, and the split depends only on the selected type paths: every shard must be run with
//! the same arguments. `K` is 0-based, as in cargo-mutants (nextest's partitions are 1-based).

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

impl FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> Result<Shard, String> {
        let (k, n) = s.split_once('/').ok_or("shard must be k/n")?;
        let k: usize = k.trim().parse().map_err(|_| "shard must be k/n")?;
        let n: usize = n.trim().parse().map_err(|_| "shard must be k/n")?;
        if n == 0 {
            return Err("shard n must be at least 1".into());
        }
        if k >= n {
            return Err("shard k must be less than n".into());
        }
        Ok(Shard { k, n })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

impl Shard {
    /// Keeps the paths of this shard, in sorted order.
    pub fn select<'a>(&self, paths: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
        let mut paths: Vec<&str> = paths.into_iter().collect();
        paths.sort_unstable();
        paths.dedup();
        paths
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % self.n == self.k)
            .map(|(_, p)| p)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(shard: &str, expect: &str) {
        let paths = ["c::C", "a::A", "e::E", "b::B", "d::D"];
        let actual = match shard.parse::<Shard>() {
            Ok(s) => s.select(paths).join(" "),
            Err(e) => format!("error: {e}"),
        };
        assert_eq!(actual, expect);
    }

    #[test]
    fn shards_deal_sorted_types_round_robin() {
        check("0/2", "a::A c::C e::E");
        check("1/2", "b::B d::D");
        check("0/1", "a::A b::B c::C d::D e::E");
    }

    #[test]
    fn more_shards_than_types_leaves_some_empty() {
        check("6/7", "");
    }

    #[test]
    fn bad_shards_are_rejected_with_cargo_mutants_wording() {
        check("2/2", "error: shard k must be less than n");
        check("1", "error: shard must be k/n");
        check("0/0", "error: shard n must be at least 1");
    }
}
