//! The ONNX importer on models built here with the `onnx.proto` messages: batch-norm folding,
//! the supported layers against their definitions, and clear errors for what is not supported.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, reason = "test code")]

use prost::Message;
use veil_aegis::Aegis;
use veil_mpc::harness::{SimConfig, simulate_with};
use veil_nn::float::{Mat, run_float_on};
use veil_nn::onnx::import;
use veil_nn::onnx_proto::{
    AttributeProto, Dimension, GraphProto, ModelProto, NodeProto, TensorProto, TensorShapeProto,
    TensorTypeProto, TypeProto, ValueInfoProto, data_type,
};
use veil_nn::secure::{Contribution, Roles, run_secure_cnn};
use veil_nn::weights::FloatTensor;
use veil_nn::{Input, NnError};

fn value(name: &str, dims: &[i64]) -> ValueInfoProto {
    let dim = dims
        .iter()
        .map(|&d| {
            if d < 0 {
                Dimension { dim_value: None, dim_param: Some("batch".into()) }
            } else {
                Dimension { dim_value: Some(d), dim_param: None }
            }
        })
        .collect();
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            tensor_type: Some(TensorTypeProto {
                elem_type: data_type::FLOAT,
                shape: Some(TensorShapeProto { dim }),
            }),
        }),
    }
}

fn tensor(name: &str, dims: &[i64], f: impl Fn(usize) -> f32) -> TensorProto {
    let n: i64 = dims.iter().product();
    let raw = (0..n as usize).flat_map(|i| f(i).to_le_bytes()).collect();
    TensorProto {
        dims: dims.to_vec(),
        data_type: data_type::FLOAT,
        name: name.into(),
        raw_data: raw,
        ..Default::default()
    }
}

fn ints(name: &str, v: &[i64]) -> AttributeProto {
    AttributeProto { name: name.into(), ints: v.to_vec(), r#type: 7, ..Default::default() }
}

fn int(name: &str, v: i64) -> AttributeProto {
    AttributeProto { name: name.into(), i: v, r#type: 2, ..Default::default() }
}

fn node(op: &str, inputs: &[&str], output: &str, attribute: Vec<AttributeProto>) -> NodeProto {
    NodeProto {
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        name: format!("{}_{output}", op.to_lowercase()),
        op_type: op.into(),
        attribute,
        domain: String::new(),
    }
}

fn model(nodes: Vec<NodeProto>, init: Vec<TensorProto>, input: &[i64], output: &str) -> Vec<u8> {
    let graph = GraphProto {
        node: nodes,
        name: "test".into(),
        initializer: init,
        input: vec![value("x", input)],
        output: vec![value(output, &[])],
    };
    ModelProto { ir_version: 8, producer_name: "veil-tests".into(), graph: Some(graph), opset_import: vec![] }
        .encode_to_vec()
}

fn wave(seed: f32) -> impl Fn(usize) -> f32 {
    move |i| ((i as f32 + 1.0) * seed).sin()
}

fn conv_init() -> Vec<TensorProto> {
    vec![tensor("w", &[3, 2, 3, 3], wave(0.7)), tensor("b", &[3], wave(1.3))]
}

fn images(n: usize) -> FloatTensor {
    FloatTensor::new(vec![n, 2, 5, 5], (0..n * 50).map(|i| ((i as f32) * 0.31).cos()).collect()).unwrap()
}

fn run(bytes: &[u8], x: &FloatTensor) -> Mat {
    let m = import(bytes, "test").unwrap();
    run_float_on(&m.graph, &m.weights, Input::Images(x)).unwrap()
}

#[test]
fn batch_norm_is_folded_into_the_convolution() {
    let conv =
        node("Conv", &["x", "w", "b"], "c", vec![ints("kernel_shape", &[3, 3]), ints("pads", &[1, 1, 1, 1])]);
    let gap = |i: &str| node("GlobalAveragePool", &[i], "g", vec![]);
    let flat = node("Flatten", &["g"], "y", vec![]);
    let plain = model(vec![conv.clone(), gap("c"), flat.clone()], conv_init(), &[-1, 2, 5, 5], "y");
    let (gamma, beta, mean, var) =
        ([1.5f32, -0.5, 2.0], [0.1f32, 0.2, -0.3], [0.3f32, -0.2, 0.05], [0.5f32, 2.0, 0.1]);
    let mut init = conv_init();
    for (name, v) in [("gamma", gamma), ("beta", beta), ("mean", mean), ("var", var)] {
        init.push(tensor(name, &[3], |i| v[i]));
    }
    let bn = node("BatchNormalization", &["c", "gamma", "beta", "mean", "var"], "n", vec![]);
    let folded = model(vec![conv, bn, gap("n"), flat], init, &[-1, 2, 5, 5], "y");
    let x = images(2);
    let (a, b) = (run(&plain, &x), run(&folded, &x));
    // Averaging commutes with the per-channel affine map of the batch norm (ε = 1e-5).
    for i in 0..a.data.len() {
        let c = i % 3;
        let want = (a.data[i] - f64::from(mean[c])) / (f64::from(var[c]) + 1e-5).sqrt() * f64::from(gamma[c])
            + f64::from(beta[c]);
        assert!((b.data[i] - want).abs() < 1e-5, "entry {i}: {} vs {want}", b.data[i]);
    }
}

/// A small net with every supported layer: conv (stride 2, asymmetric padding), ReLU, average
/// pooling with padding left out of the divisor, max pooling with padding, a residual add,
/// a reshape to [N, -1], a MatMul and its bias.
fn every_layer() -> Vec<u8> {
    let nodes = vec![
        node(
            "Conv",
            &["x", "w", "b"],
            "c",
            vec![ints("kernel_shape", &[3, 3]), ints("strides", &[2, 1]), ints("pads", &[1, 0, 1, 2])],
        ),
        node("Relu", &["c"], "r", vec![]),
        node(
            "AveragePool",
            &["r"],
            "a",
            vec![ints("kernel_shape", &[2, 2]), ints("strides", &[1, 1]), ints("pads", &[1, 1, 0, 0])],
        ),
        node(
            "MaxPool",
            &["r"],
            "m",
            vec![ints("kernel_shape", &[2, 2]), ints("strides", &[1, 1]), ints("pads", &[1, 1, 0, 0])],
        ),
        node("Add", &["a", "m"], "s", vec![]),
        node("Identity", &["s"], "s2", vec![]),
        node("Reshape", &["s2", "shape"], "f", vec![]),
        node("MatMul", &["f", "fc"], "h", vec![]),
        node("Add", &["h", "fc_b"], "y", vec![]),
    ];
    // conv: 5x5 → (5+2−3)/2+1 = 3 rows, (5+2−3)/1+1 = 5 cols; pools (pad 1 top/left): 3x5.
    let mut init = conv_init();
    init.push(TensorProto {
        dims: vec![2],
        data_type: data_type::INT64,
        name: "shape".into(),
        int64_data: vec![0, -1],
        ..Default::default()
    });
    init.push(tensor("fc", &[45, 4], wave(0.11)));
    init.push(tensor("fc_b", &[4], wave(0.5)));
    model(nodes, init, &[-1, 2, 5, 5], "y")
}

#[test]
fn every_layer_runs_in_float_and_under_aegis_alike() {
    let m = import(&every_layer(), "every").unwrap();
    let ops: Vec<&str> = m.graph.nodes.iter().map(|n| n.op.name()).collect();
    assert_eq!(ops, ["image", "conv2d", "relu", "avg-pool", "max-pool", "add", "flatten", "linear"]);
    let x = images(2);
    let float = run_float_on(&m.graph, &m.weights, Input::Images(&x)).unwrap();
    assert_eq!((float.rows, float.cols), (2, 4));
    let cfg = SimConfig { timeout: std::time::Duration::from_secs(300), ..SimConfig::new(3) };
    let roles = Roles { data_owner: 3, model_owner: 4 };
    let results = simulate_with(5, cfg, |ctx| {
        let mine = match ctx.party() {
            3 => Contribution::Data(Input::Images(&x)),
            4 => Contribution::Model(&m.weights),
            _ => Contribution::Server,
        };
        let mut a = Aegis::new(64)?;
        run_secure_cnn(&mut a, ctx, &m.graph, 2, roles, mine)
            .map_err(|e| veil_mpc::MpcError::Invalid(e.to_string()))
    });
    let out = results.into_iter().nth(3).unwrap().unwrap().output.unwrap();
    let err = out.data.iter().zip(&float.data).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    assert!(err < 1e-2, "aegis off by {err}");
}

#[test]
fn unsupported_and_malformed_models_are_named() {
    let e = import(b"not a model at all", "bad").unwrap_err().to_string();
    assert!(e.contains("not an ONNX model"), "{e}");
    let nodes = vec![node("LSTM", &["x"], "a", vec![]), node("Softmax", &["a"], "y", vec![])];
    let e = import(&model(nodes, vec![], &[-1, 2, 5, 5], "y"), "t").unwrap_err();
    assert!(matches!(e, NnError::Unsupported(_)));
    let e = e.to_string();
    assert!(e.contains("LSTM") && e.contains("Softmax"), "{e}");
    let grouped = node("Conv", &["x", "w"], "y", vec![int("group", 2)]);
    let e = import(&model(vec![grouped], conv_init(), &[-1, 2, 5, 5], "y"), "t").unwrap_err().to_string();
    assert!(e.contains("grouped"), "{e}");
    let dilated = node("Conv", &["x", "w"], "y", vec![ints("dilations", &[2, 2])]);
    let e = import(&model(vec![dilated], conv_init(), &[-1, 2, 5, 5], "y"), "t").unwrap_err().to_string();
    assert!(e.contains("dilations"), "{e}");
    let conv = node("Conv", &["x", "w"], "y", vec![]);
    let e =
        import(&model(vec![conv.clone()], conv_init(), &[-1, 3, 5, 5], "y"), "t").unwrap_err().to_string();
    assert!(e.contains("expected [3, 3, 3, out]"), "{e}");
    let e = import(&model(vec![conv], conv_init(), &[-1, 2, -1, 5], "y"), "t").unwrap_err().to_string();
    assert!(e.contains("fixed C, H, W"), "{e}");
    let bn = node("BatchNormalization", &["x", "g", "b", "m", "v"], "y", vec![]);
    let init: Vec<_> = ["g", "b", "m", "v"].iter().map(|n| tensor(n, &[2], |_| 1.0)).collect();
    let e = import(&model(vec![bn], init, &[-1, 2, 5, 5], "y"), "t").unwrap_err().to_string();
    assert!(e.contains("not right after a Conv"), "{e}");
    let reads_missing = node("Relu", &["nowhere"], "y", vec![]);
    let e = import(&model(vec![reads_missing], vec![], &[-1, 2, 5, 5], "y"), "t").unwrap_err().to_string();
    assert!(e.contains("nowhere"), "{e}");
}
