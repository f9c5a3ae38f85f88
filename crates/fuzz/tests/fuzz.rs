//! Every fuzz target, briefly (see the crate docs for a long run).
#![allow(clippy::panic, reason = "test code")]

#[global_allocator]
static GUARD: veil_fuzz::AllocationGuard = veil_fuzz::AllocationGuard;

fn target(name: &str) {
    let Some(t) = veil_fuzz::TARGETS.iter().find(|t| t.name == name) else { panic!("no target {name}") };
    match veil_fuzz::fuzz(t) {
        Ok(r) => eprintln!("{name}: {} mutated inputs, {} accepted, no panic", r.cases, r.accepted),
        Err(e) => panic!("{e}"),
    }
}

macro_rules! targets {
    ($($name:ident),* $(,)?) => {
        $(#[test] fn $name() { target(stringify!($name)); })*
        /// Every target has a test.
        #[test]
        fn every_target_is_tested() {
            let tested = [$(stringify!($name)),*];
            for t in veil_fuzz::TARGETS {
                assert!(tested.contains(&t.name), "target {} has no test", t.name);
            }
        }
    };
}

targets!(
    safetensors,
    image_set,
    model_config,
    tokenizer_json,
    bpe_files,
    onnx,
    public_model,
    material,
    material_file,
    frames,
    hello,
    ring_message,
    dpf_key,
    certificates,
);

/// The edits do what they say.
#[test]
fn edits_apply_as_documented() {
    use veil_fuzz::{Edit, apply};
    let s = b"ab12cd";
    assert_eq!(apply(s, &[Edit::Flip { at: 0, bit: 0 }]), b"`b12cd");
    assert_eq!(apply(s, &[Edit::Number { at: 1, value: 9999 }]), b"ab9999cd");
    assert_eq!(apply(s, &[Edit::Truncate { at: 2 }]), b"ab");
    assert_eq!(apply(s, &[Edit::Remove { at: 1, len: 2 }]), b"a2cd");
    assert_eq!(apply(s, &[Edit::Insert { at: 6, bytes: vec![b'!'] }]), b"ab12cd!");
    assert_eq!(apply(s, &[Edit::Repeat { at: 0, len: 2, times: 2 }]), b"ababab12cd");
    assert_eq!(apply(s, &[Edit::Word { at: 5, value: 0x4142, width: 2 }]), b"ab12cBA");
}
