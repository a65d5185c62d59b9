//! The ibsim net reader must return a fabric or a `file:line:` error for any input.
#![no_main]

use ibcloud_fabric::formats::ibsim;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = ibsim::parse(text, "fuzz.net") {
            assert!(e.to_string().starts_with("fuzz.net:"), "{e}");
        }
    }
});
