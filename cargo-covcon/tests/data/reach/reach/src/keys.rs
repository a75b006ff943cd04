/// A key type of another module, the default of `Pool`'s first parameter.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Key(u32);

impl Key {
    pub fn new(n: u32) -> Key {
        Key(n)
    }
}
