//! An exact set of core ids for any core count: up to `INLINE` ids kept inline (the common case: a line shared by
//! a few cores costs no allocation), spilling to a bit vector sized for the largest id when more join. Never a
//! fixed-width mask that would alias core 64 with core 0.

const INLINE: usize = 4;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SharerSet {
    Inline { len: u8, ids: [u16; INLINE] },
    Bits(Vec<u64>),
}

impl Default for SharerSet {
    fn default() -> Self {
        SharerSet::Inline { len: 0, ids: [0; INLINE] }
    }
}

impl SharerSet {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn contains(&self, id: u16) -> bool {
        match self {
            SharerSet::Inline { len, ids } => ids[..*len as usize].contains(&id),
            SharerSet::Bits(w) => w.get(id as usize / 64).is_some_and(|&x| x >> (id % 64) & 1 == 1),
        }
    }

    pub fn insert(&mut self, id: u16) {
        match self {
            SharerSet::Inline { len, ids } => {
                if ids[..*len as usize].contains(&id) {
                    return;
                }
                if (*len as usize) < INLINE {
                    ids[*len as usize] = id;
                    *len += 1;
                    return;
                }
                let mut bits = Vec::new();
                for &x in ids.iter() {
                    set_bit(&mut bits, x);
                }
                set_bit(&mut bits, id);
                *self = SharerSet::Bits(bits);
            }
            SharerSet::Bits(w) => set_bit(w, id),
        }
    }

    pub fn remove(&mut self, id: u16) {
        match self {
            SharerSet::Inline { len, ids } => {
                let n = *len as usize;
                if let Some(i) = ids[..n].iter().position(|&x| x == id) {
                    ids.copy_within(i + 1..n, i);
                    *len -= 1;
                }
            }
            SharerSet::Bits(w) => {
                if let Some(x) = w.get_mut(id as usize / 64) {
                    *x &= !(1u64 << (id % 64));
                }
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        match self {
            SharerSet::Inline { len, .. } => *len == 0,
            SharerSet::Bits(w) => w.iter().all(|&x| x == 0),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            SharerSet::Inline { len, .. } => *len as usize,
            SharerSet::Bits(w) => w.iter().map(|x| x.count_ones() as usize).sum(),
        }
    }

    pub fn clear(&mut self) {
        *self = SharerSet::default();
    }

    /// The ids, in a deterministic order (insertion order inline, ascending once spilled).
    pub fn to_vec(&self) -> Vec<u16> {
        match self {
            SharerSet::Inline { len, ids } => ids[..*len as usize].to_vec(),
            SharerSet::Bits(w) => {
                (0..w.len() * 64).filter(|&i| w[i / 64] >> (i % 64) & 1 == 1).map(|i| i as u16).collect()
            }
        }
    }
}

fn set_bit(words: &mut Vec<u64>, id: u16) {
    let w = id as usize / 64;
    if words.len() <= w {
        words.resize(w + 1, 0);
    }
    words[w] |= 1u64 << (id % 64);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracks_ids_exactly_past_the_inline_capacity_and_past_64() {
        let mut s = SharerSet::new();
        for id in [0u16, 64, 128, 3, 1000, 63] {
            s.insert(id);
        }
        assert_eq!(s.len(), 6);
        assert!(matches!(s, SharerSet::Bits(_)), "spilled after {INLINE} ids");
        assert!(s.contains(64) && s.contains(0) && s.contains(1000));
        assert!(!s.contains(1) && !s.contains(192), "no aliasing modulo 64");
        s.remove(0);
        assert!(!s.contains(0) && s.contains(64));
        assert_eq!(s.to_vec(), vec![3, 63, 64, 128, 1000]);
        let mut small = SharerSet::new();
        small.insert(7);
        small.insert(7);
        small.insert(9);
        small.remove(7);
        assert_eq!(small.to_vec(), vec![9]);
    }
}
