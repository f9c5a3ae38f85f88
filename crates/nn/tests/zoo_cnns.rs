//! The zoo's ImageNet models build at their real shapes (ResNet-50: 25.6M weights; DenseNet-121:
//! 8.0M, 1 024 features before the classifier; ViT-B/16: 86.6M), and a channel concatenation runs alike in
//! float and in fixed point, in the channels-last layout.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use veil_nn::Input;
use veil_nn::cnn::Window;
use veil_nn::fixed::{ExactCnn, run_fixed};
use veil_nn::float::run_float_on;
use veil_nn::graph::{Graph, Op};
use veil_nn::zoo::{cnn, random_images, random_weights};

fn params(name: &str) -> usize {
    let (g, w, input) = cnn(name, 1).unwrap();
    assert_eq!(input, [3, 224, 224]);
    let shapes = g.shapes(1).unwrap();
    assert_eq!(shapes[g.output().unwrap()], vec![1, 1000], "{name} ends in 1000 classes");
    w.values().map(|t| t.data.len()).sum()
}

#[test]
fn resnet50_densenet121_and_vit_base_have_their_real_sizes() {
    let resnet = params("resnet50");
    assert!((25_400_000..25_700_000).contains(&resnet), "ResNet-50 has {resnet} weights");
    let densenet = params("densenet121");
    assert!((7_900_000..8_100_000).contains(&densenet), "DenseNet-121 has {densenet} weights");
    // ViT-B/16 with its 1000-class head: 86.6M weights.
    let vit = params("vit-base");
    assert!((86_400_000..86_700_000).contains(&vit), "ViT-base has {vit} weights");
}

#[test]
fn a_channel_concatenation_runs_alike_in_float_and_fixed_point() {
    let mut g = Graph::default();
    g.set_scope("net");
    let x = g.push(Op::Image { channels: 2, height: 5, width: 5 }, &[]);
    let (weight, bias) = (g.weight("conv.weight", &[3, 3, 2, 3]), Some(g.weight("conv.bias", &[3])));
    let c = g.push(Op::Conv2d { weight, bias, window: Window::square(3, 1, 1) }, &[x]);
    let joined = g.push(Op::ChannelConcat, &[c, x]);
    assert_eq!(g.shapes(2).unwrap()[joined], vec![2, 5, 5, 5]);
    let r = g.push(Op::Relu, &[joined]);
    let f = g.push(Op::Flatten, &[r]);
    let (weight, bias) = (g.weight("fc.weight", &[125, 4]), None);
    g.push(Op::Linear { weight, bias }, &[f]);
    let w = random_weights(&g, 3);
    let images = random_images(2, [2, 5, 5], 4);
    let float = run_float_on(&g, &w, Input::Images(&images)).unwrap();
    let fixed = run_fixed(&g, &w, Input::Images(&images), &ExactCnn(16)).unwrap();
    assert_eq!((float.rows, float.cols), (2, 4));
    for (a, b) in float.data.iter().zip(&fixed.output.data) {
        assert!((a - b).abs() < 1e-3, "float {a}, fixed point {b}");
    }
    // Images of different sizes are refused.
    let mut bad = Graph::default();
    let x = bad.push(Op::Image { channels: 2, height: 5, width: 5 }, &[]);
    let (weight, bias) = (bad.weight("conv.weight", &[3, 3, 2, 1]), None);
    let small = bad.push(Op::Conv2d { weight, bias, window: Window::square(3, 2, 0) }, &[x]);
    bad.push(Op::ChannelConcat, &[x, small]);
    let err = bad.shapes(1).unwrap_err().to_string();
    assert!(err.contains("images 1×5×5 and 1×2×2"), "{err}");
}
