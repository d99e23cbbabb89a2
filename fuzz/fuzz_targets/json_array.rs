//! cargo-fuzz target `json_array`: see [`streamwire_fuzz::json_array`] for what it checks.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| streamwire_fuzz::json_array(data));
