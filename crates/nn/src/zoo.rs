//! The CNNs of the `aegis` paper's evaluation (its Table 3 and appendix C.1), as graphs with
//! seeded random weights, for `veil bench model`. The paper leaves details out; the choices made
//! here:
//! - **S-NN**: 1×28×28 → conv 5@5×5, stride 2, padding 1 (the only padding giving the stated
//!   13×13) → ReLU → FC 845→10.
//! - **LeNet**: 1×32×32 → conv 6@5×5 → ReLU → max-pool 2 → conv 16@5×5 → ReLU → max-pool 2 →
//!   FC 400→120 → ReLU → FC 120→84 → ReLU → FC 84→10 (LeNet-5 with ReLU for sigmoid: 2 conv,
//!   2 pools, 4 ReLU, 3 FC as stated).
//! - **VGG-16 (64×64)**: 3×64×64 → the 13 3×3 convolutions of VGG-16 (64, 64 | 128, 128 |
//!   256 ×3 | 512 ×3 | 512 ×3), each with ReLU, a 2×2 max-pool after each block → FC
//!   2048→512 → ReLU → FC 512→512 → ReLU → FC 512→200 (Tiny-ImageNet's 200 classes; the
//!   paper's "8-layer full connection" is not specified further).
//!
//! Weights are He-scaled (`N(0, 2/fan_in)` by a seeded generator), biases small, so activations
//! keep their scale through the layers, as in a trained network.

use veil_crypto::{Prg, Seed};

use crate::cnn::Window;
use crate::error::{NnError, Result};
use crate::graph::{Graph, Op, ValueId};
use crate::weights::{FloatTensor, Weights};

/// The models `veil bench model` knows.
pub const CNNS: &[&str] = &["snn", "lenet", "vgg16", "resnet50", "densenet121", "vit-base"];

struct Builder {
    g: Graph,
    w: Weights,
    prg: Prg,
    layer: usize,
}

/// The project's AES-CTR generator from a small seed (reproducible weights and inputs).
fn seeded(seed: u64, what: u8) -> Prg {
    let mut s = [0u8; 16];
    s[..8].copy_from_slice(&seed.to_le_bytes());
    s[8] = what;
    Prg::new(&Seed(s))
}

/// A uniform value in `(0, 1)` from 53 random bits.
fn uniform(prg: &mut Prg) -> f64 {
    ((prg.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
}

/// A standard normal sample (Box–Muller).
fn normal(prg: &mut Prg) -> f64 {
    let (a, b) = (uniform(prg), uniform(prg));
    (-2.0 * a.ln()).sqrt() * (std::f64::consts::TAU * b).cos()
}

impl Builder {
    fn new(c: usize, h: usize, w: usize, seed: u64) -> (Self, ValueId) {
        let mut g = Graph::default();
        g.set_scope("input");
        let v = g.push(Op::Image { channels: c, height: h, width: w }, &[]);
        (Builder { g, w: Weights::new(), prg: seeded(seed, 0), layer: 0 }, v)
    }

    fn tensor(&mut self, name: &str, shape: &[usize], std: f64) -> String {
        let n = shape.iter().product();
        let data = (0..n).map(|_| (normal(&mut self.prg) * std) as f32).collect();
        let name = self.g.weight(name, shape);
        self.w.insert(name.clone(), FloatTensor { shape: shape.to_vec(), data });
        name
    }

    fn conv(&mut self, x: ValueId, cin: usize, cout: usize, k: usize, stride: usize, pad: usize) -> ValueId {
        self.layer += 1;
        let scope = format!("conv{}", self.layer);
        self.g.set_scope(&scope);
        let weight =
            self.tensor(&format!("{scope}.weight"), &[k, k, cin, cout], (2.0 / (k * k * cin) as f64).sqrt());
        let bias = Some(self.tensor(&format!("{scope}.bias"), &[cout], 0.01));
        let c = self.g.push(Op::Conv2d { weight, bias, window: Window::square(k, stride, pad) }, &[x]);
        self.g.push(Op::Relu, &[c])
    }

    /// A convolution with batch norm folded in (a bias), ReLU after when `relu`; `gain`
    /// scales the weights (below 1 for the last convolution of a residual branch, as a
    /// trained network's small last batch-norm scale keeps the sums' variance).
    #[allow(clippy::too_many_arguments, reason = "a convolution's shape")]
    fn conv_bn(
        &mut self,
        x: ValueId,
        (cin, cout): (usize, usize),
        (k, stride, pad): (usize, usize, usize),
        relu: bool,
        gain: f64,
    ) -> ValueId {
        self.layer += 1;
        let scope = format!("conv{}", self.layer);
        self.g.set_scope(&scope);
        let std = gain * (2.0 / (k * k * cin) as f64).sqrt();
        let weight = self.tensor(&format!("{scope}.weight"), &[k, k, cin, cout], std);
        let bias = Some(self.tensor(&format!("{scope}.bias"), &[cout], 0.01));
        let c = self.g.push(Op::Conv2d { weight, bias, window: Window::square(k, stride, pad) }, &[x]);
        if relu { self.g.push(Op::Relu, &[c]) } else { c }
    }

    /// ResNet's bottleneck: 1×1, 3×3 (stride), 1×1 to `4·width`, the shortcut (a strided 1×1
    /// projection where the shape changes), sum, ReLU.
    fn bottleneck(&mut self, x: ValueId, cin: usize, width: usize, stride: usize) -> ValueId {
        let a = self.conv_bn(x, (cin, width), (1, 1, 0), true, 1.0);
        let b = self.conv_bn(a, (width, width), (3, stride, 1), true, 1.0);
        let c = self.conv_bn(b, (width, 4 * width), (1, 1, 0), false, 0.2);
        let short = if stride != 1 || cin != 4 * width {
            self.conv_bn(x, (cin, 4 * width), (1, stride, 0), false, 1.0)
        } else {
            x
        };
        let sum = self.g.push(Op::Add, &[c, short]);
        self.g.push(Op::Relu, &[sum])
    }

    fn pool(&mut self, x: ValueId) -> ValueId {
        self.g.push(Op::MaxPool(Window::square(2, 2, 0)), &[x])
    }

    fn fc(&mut self, x: ValueId, fin: usize, fout: usize, relu: bool) -> ValueId {
        self.layer += 1;
        let scope = format!("fc{}", self.layer);
        self.g.set_scope(&scope);
        let weight = self.tensor(&format!("{scope}.weight"), &[fin, fout], (2.0 / fin as f64).sqrt());
        let bias = Some(self.tensor(&format!("{scope}.bias"), &[fout], 0.01));
        let y = self.g.push(Op::Linear { weight, bias }, &[x]);
        if relu { self.g.push(Op::Relu, &[y]) } else { y }
    }

    fn flatten(&mut self, x: ValueId) -> ValueId {
        self.g.push(Op::Flatten, &[x])
    }
}

/// A paper's image model by name ([`CNNS`]: the CNNs and ViT-base) with seeded random weights;
/// also returns the input's `[C, H, W]`.
pub fn cnn(name: &str, seed: u64) -> Result<(Graph, Weights, [usize; 3])> {
    let (g, w, input) = match name {
        "snn" => {
            let (mut b, x) = Builder::new(1, 28, 28, seed);
            let c = b.conv(x, 1, 5, 5, 2, 1);
            let f = b.flatten(c);
            b.fc(f, 845, 10, false);
            (b.g, b.w, [1, 28, 28])
        }
        "lenet" => {
            let (mut b, x) = Builder::new(1, 32, 32, seed);
            let c = b.conv(x, 1, 6, 5, 1, 0);
            let p = b.pool(c);
            let c = b.conv(p, 6, 16, 5, 1, 0);
            let p = b.pool(c);
            let f = b.flatten(p);
            let h = b.fc(f, 400, 120, true);
            let h = b.fc(h, 120, 84, true);
            b.fc(h, 84, 10, false);
            (b.g, b.w, [1, 32, 32])
        }
        "vgg16" => {
            let (mut b, mut x) = Builder::new(3, 64, 64, seed);
            let mut cin = 3;
            for (width, convs) in [(64, 2), (128, 2), (256, 3), (512, 3), (512, 3)] {
                for _ in 0..convs {
                    x = b.conv(x, cin, width, 3, 1, 1);
                    cin = width;
                }
                x = b.pool(x);
            }
            let f = b.flatten(x);
            let h = b.fc(f, 2048, 512, true);
            let h = b.fc(h, 512, 512, true);
            b.fc(h, 512, 200, false);
            (b.g, b.w, [3, 64, 64])
        }
        "resnet50" => {
            // ResNet-50 (He et al., the torchvision layout): 3×224×224, batch norm folded.
            let (mut b, x) = Builder::new(3, 224, 224, seed);
            let x = b.conv_bn(x, (3, 64), (7, 2, 3), true, 1.0);
            let mut x = b.g.push(Op::MaxPool(Window::square(3, 2, 1)), &[x]);
            let mut cin = 64;
            for (width, blocks, stride) in [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)] {
                for i in 0..blocks {
                    x = b.bottleneck(x, cin, width, if i == 0 { stride } else { 1 });
                    cin = 4 * width;
                }
            }
            b.g.set_scope("head");
            let window = Window { kernel: [7, 7], stride: [1, 1], pad: [0; 4] };
            let p = b.g.push(Op::AvgPool { window, count_pad: false }, &[x]);
            let f = b.flatten(p);
            b.fc(f, 2048, 1000, false);
            (b.g, b.w, [3, 224, 224])
        }
        "densenet121" => {
            // DenseNet-121 (Huang et al., the torchvision layout): growth 32, bottleneck 4·32,
            // blocks of 6, 12, 24, 16 layers, transitions halving the channels. The batch norms
            // that follow a convolution are folded into it; those in front of a ReLU on the
            // concatenated features (norm1 of each layer, the transitions' and the last) are
            // the identity here, as random weights give them nothing to scale.
            let (mut b, x) = Builder::new(3, 224, 224, seed);
            let x = b.conv_bn(x, (3, 64), (7, 2, 3), true, 1.0);
            let mut x = b.g.push(Op::MaxPool(Window::square(3, 2, 1)), &[x]);
            let mut c = 64;
            for (i, layers) in [6, 12, 24, 16].into_iter().enumerate() {
                for _ in 0..layers {
                    let r = b.g.push(Op::Relu, &[x]);
                    let y = b.conv_bn(r, (c, 128), (1, 1, 0), true, 1.0);
                    let y = b.conv_bn(y, (128, 32), (3, 1, 1), false, 1.0);
                    x = b.g.push(Op::ChannelConcat, &[x, y]);
                    c += 32;
                }
                if i < 3 {
                    let r = b.g.push(Op::Relu, &[x]);
                    let y = b.conv_bn(r, (c, c / 2), (1, 1, 0), false, 1.0);
                    let window = Window::square(2, 2, 0);
                    x = b.g.push(Op::AvgPool { window, count_pad: false }, &[y]);
                    c /= 2;
                }
            }
            b.g.set_scope("head");
            let x = b.g.push(Op::Relu, &[x]);
            let window = Window { kernel: [7, 7], stride: [1, 1], pad: [0; 4] };
            let p = b.g.push(Op::AvgPool { window, count_pad: false }, &[x]);
            let f = b.flatten(p);
            b.fc(f, c, 1000, false);
            (b.g, b.w, [3, 224, 224])
        }
        "vit-base" => {
            // ViT-B/16 (Dosovitskiy et al., the Hugging Face layout): 224×224 images cut into
            // 16×16 patches (196 rows and the class token), width 768, 12 heads, 12 blocks,
            // feed-forward 3072, erf GELU, a 1000-class head; random weights at the scales of
            // `random_weights` (86.6M of them).
            let config = crate::vit::VitConfig {
                hidden: 768,
                heads: 12,
                layers: 12,
                ffn: 3072,
                gelu: crate::graph::GeluForm::Erf,
                eps: 1e-12,
                image: 224,
                patch: 16,
                channels: 3,
                labels: Some(1000),
            };
            let g = crate::vit::vit_graph(&config);
            let w = random_weights(&g, seed);
            (g, w, [3, 224, 224])
        }
        other => {
            return Err(NnError::Unsupported(format!("model {other}; the models are {}", CNNS.join(", "))));
        }
    };
    g.shapes(1)?;
    Ok((g, w, input))
}

/// `n` seeded images of `[C, H, W]` with entries in `[0, 1)`.
pub fn random_images(n: usize, [c, h, w]: [usize; 3], seed: u64) -> FloatTensor {
    let mut prg = seeded(seed, 1);
    let data = (0..n * c * h * w).map(|_| uniform(&mut prg) as f32).collect();
    FloatTensor { shape: vec![n, c, h, w], data }
}

/// Seeded random weights for any graph, scaled by the role of each weight: linear and
/// convolution kernels `N(0, 1/fan_in)`, LayerNorm `γ` around 1 (`1 + N(0, 0.1²)`), LayerNorm
/// `β` and biases `N(0, 0.1²)`, embedding tables `N(0, 0.5²)`. Keeps a random transformer's
/// activations in the range of a trained one, for tests and benchmarks.
pub fn random_weights(g: &Graph, seed: u64) -> Weights {
    let mut prg = seeded(seed, 2);
    let mut w = Weights::new();
    for node in &g.nodes {
        let roles: Vec<(&String, f64, f64)> = match &node.op {
            Op::Linear { weight, bias } | Op::Conv2d { weight, bias, .. } => {
                let shape = &g.weights[weight];
                let fan_in: usize = shape[..shape.len() - 1].iter().product();
                let mut r = vec![(weight, 0.0, 1.0 / (fan_in.max(1) as f64).sqrt())];
                r.extend(bias.iter().map(|b| (b, 0.0, 0.1)));
                r
            }
            Op::LayerNorm { gamma, beta, .. } => vec![(gamma, 1.0, 0.1), (beta, 0.0, 0.1)],
            Op::Embedding { table }
            | Op::Positions { table }
            | Op::RowBroadcast { table, .. }
            | Op::PrependRow { table } => {
                vec![(table, 0.0, 0.5)]
            }
            _ => Vec::new(),
        };
        for (name, mean, std) in roles {
            if w.contains_key(name) {
                continue;
            }
            let shape = g.weights[name].clone();
            let data = (0..shape.iter().product()).map(|_| (mean + std * normal(&mut prg)) as f32).collect();
            w.insert(name.clone(), FloatTensor { shape, data });
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paper_cnns_have_their_stated_layers() {
        for (name, relus, pools, convs, out) in
            [("snn", 1, 0, 1, 10), ("lenet", 4, 2, 2, 10), ("vgg16", 15, 5, 13, 200)]
        {
            let (g, w, input) = cnn(name, 1).unwrap();
            let count = |f: fn(&Op) -> bool| g.nodes.iter().filter(|n| f(&n.op)).count();
            assert_eq!(count(|o| matches!(o, Op::Relu)), relus, "{name}");
            assert_eq!(count(|o| matches!(o, Op::MaxPool(_))), pools, "{name}");
            assert_eq!(count(|o| matches!(o, Op::Conv2d { .. })), convs, "{name}");
            assert_eq!(g.shapes(2).unwrap().last().unwrap(), &vec![2, out], "{name}");
            assert_eq!(w.len(), g.weights.len());
            assert_eq!(random_images(2, input, 3).shape, [2, input[0], input[1], input[2]]);
        }
    }
}
