//! glibc's `rand()` (the TYPE_3 additive feedback generator behind `random()`),
//! in the state a process starts with: seeded with 1, which is what OpenSM's
//! lash engine draws from when it balances its layers (OpenSM never seeds it
//! unless another engine or `scatter_ports` is configured).

/// The generator: 31 words of state, tap distance 3.
#[derive(Clone, Debug)]
pub(super) struct GlibcRand {
    state: [u32; 31],
    front: usize,
    rear: usize,
}

impl GlibcRand {
    /// The state after `srand(seed)`; `srand(1)` equals never seeding.
    pub(super) fn new(seed: u32) -> Self {
        let mut state = [0u32; 31];
        let seed = if seed == 0 { 1 } else { seed };
        state[0] = seed;
        let mut word = seed as i32 as i64;
        for slot in state.iter_mut().skip(1) {
            // 16807 * word mod (2^31 - 1), Schrage's way, as glibc does it.
            let hi = word / 127_773;
            let lo = word % 127_773;
            word = 16_807 * lo - 2_836 * hi;
            if word < 0 {
                word += 2_147_483_647;
            }
            *slot = word as u32;
        }
        let mut r = Self {
            state,
            front: 3,
            rear: 0,
        };
        for _ in 0..310 {
            r.next_u31();
        }
        r
    }

    /// The next `rand()` value, in `0..=0x7fff_ffff`.
    pub(super) fn next_u31(&mut self) -> u32 {
        let sum = self.state[self.front].wrapping_add(self.state[self.rear]);
        self.state[self.front] = sum;
        self.front = (self.front + 1) % 31;
        self.rear = (self.rear + 1) % 31;
        sum >> 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_glibc_unseeded_sequence() {
        let mut r = GlibcRand::new(1);
        let first: Vec<u32> = (0..5).map(|_| r.next_u31()).collect();
        assert_eq!(
            first,
            [
                1_804_289_383,
                846_930_886,
                1_681_692_777,
                1_714_636_915,
                1_957_747_793
            ]
        );
    }
}
