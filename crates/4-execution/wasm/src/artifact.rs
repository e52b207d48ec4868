//! What a WASM artifact's bytes say before it runs: the size of its compiled code's mapping
//! and of its data segments (the memory budget's accounting), and whether instantiating it
//! would run code of its own (a start function: then it is not instantiated ahead).

/// The length of a mapping (compiled code's `image_range`), in bytes.
pub(super) fn span(r: std::ops::Range<*const u8>) -> u64 {
    r.end.addr().saturating_sub(r.start.addr()) as u64
}

/// What an artifact's bytes say, kept after its loaded form is unloaded (see `Known`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Facts {
    /// Instantiating it runs none of its code (no start function).
    pub inert: bool,
    /// Its data segments' bytes ([`data_bytes`]).
    pub data_bytes: u64,
}

impl Facts {
    /// The facts of `bytes`.
    pub(super) fn of(bytes: &[u8]) -> Facts {
        Facts {
            inert: !runs_at_instantiation(bytes),
            data_bytes: data_bytes(bytes),
        }
    }
}

/// The bytes of initial data in `bytes`' data segments (a core module's, or those of every
/// module nested in a component): what its memory images are made of.
pub(super) fn data_bytes(bytes: &[u8]) -> u64 {
    use wasmtime::wasmparser::{Parser, Payload};
    let mut total = 0u64;
    for payload in Parser::new(0).parse_all(bytes) {
        if let Ok(Payload::DataSection(reader)) = payload {
            for data in reader.into_iter().flatten() {
                total += data.data.len() as u64;
            }
        }
    }
    total
}

/// Whether instantiating `bytes` (a core module or a component, with the modules and
/// components nested in it) would run code of its own: a start function. Bytes that do not
/// parse count as yes.
pub(super) fn runs_at_instantiation(bytes: &[u8]) -> bool {
    use wasmtime::wasmparser::{Parser, Payload};
    for payload in Parser::new(0).parse_all(bytes) {
        match payload {
            Ok(Payload::StartSection { .. } | Payload::ComponentStartSection { .. }) | Err(_) => {
                return true;
            }
            Ok(_) => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::runs_at_instantiation;

    /// `(module (func) (start 0))` with its start section, or without it.
    fn module(start: bool) -> Vec<u8> {
        let mut m = vec![0, 0x61, 0x73, 0x6d, 1, 0, 0, 0];
        m.extend([1, 4, 1, 0x60, 0, 0]); // one type: () -> ()
        m.extend([3, 2, 1, 0]); // one function of it
        if start {
            m.extend([8, 1, 0]); // start: function 0
        }
        m.extend([10, 4, 1, 2, 0, 0x0b]); // its body: no locals, end
        m
    }

    #[test]
    fn only_an_artifact_without_a_start_function_is_instantiated_ahead() {
        assert!(!runs_at_instantiation(&module(false)));
        assert!(runs_at_instantiation(&module(true)));
        // What does not parse is taken to run code.
        assert!(runs_at_instantiation(b"\0asm\x01\0\0\0\x0a\xff"));
        // Both forms are valid modules for wasmtime.
        let engine = wasmtime::Engine::default();
        for start in [false, true] {
            wasmtime::Module::new(&engine, module(start)).expect("a valid module");
        }
    }
}
