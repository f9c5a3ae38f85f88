//! How much memory a text job will take, said before it starts: each party's peak, scaled from
//! the peaks measured on the main job by the model's number of weights (what a party holds
//! scales with them: the weights' shares, the model owner's fixed-point copy; material made on
//! demand is bounded by the chunk), plus the material a server holds when it makes a whole
//! session's material ahead ([`veil_runtime::families::FamilyChoice::plan`]).
//!
//! Measured on all-MiniLM-L6-v2 (22.7 M weights) on the 2-core machine, one process per
//! party, 13 and 26 tokens (the peaks moved by 4% between them):
//!
//! | family, security | party | peak |
//! |---|---|---|
//! | `mosformer`, malicious, on demand | each server | 1,595 MiB (1,660 at 26 tokens) |
//! | `mosformer`, malicious, ahead | each server | 3,190 MiB (132,145 gate elements) |
//! | `mosformer`, semi-honest, on demand | each server | 640 MiB |
//! | `mosformer` | model owner, data owner | 1,004 MiB, 58 MiB (85 at 26 tokens) |
//! | `mm` | client (data owner), server (model owner) | 792 MiB, 863 MiB |

use veil_nn::graph::Graph;
use veil_runtime::Security;
use veil_runtime::ahead::Material;
use veil_runtime::families::FamilyChoice;

/// Weights of the model the constants below were measured on (all-MiniLM-L6-v2).
const MEASURED_WEIGHTS: f64 = 22_713_728.0;

/// Bytes of a measured peak, in MiB.
const fn mib(m: u64) -> f64 {
    (m << 20) as f64
}

/// Bytes a server holds per gate element of material made ahead (measured: 3,190 − 1,595 MiB
/// over 132,145 elements).
const AHEAD_BYTES_PER_ELEMENT: f64 = 12_660.0;

/// The least a party process takes (the binary, its threads, the TLS links).
const FLOOR: f64 = mib(64);

/// The estimated peak of each party of a text job (by party id), in bytes, for an input of
/// `tokens` tokens; where the count is not known (a server before the data owner announces
/// it), material made ahead is counted at the most a server makes ahead
/// ([`veil_runtime::ahead::AHEAD_LIMIT`] gate elements).
///
/// # Errors
/// A plan the family cannot make for this graph (only asked for with material made ahead).
pub fn text_job_peaks(
    choice: &FamilyChoice,
    graph: &Graph,
    tokens: Option<usize>,
    material: &Material,
) -> anyhow::Result<Vec<u64>> {
    let weights: usize = graph.weights.values().map(|s| s.iter().product::<usize>()).sum();
    let scale = weights as f64 / MEASURED_WEIGHTS;
    let roles = choice.topology.roles;
    let ahead = match material {
        Material::Ahead => {
            let elements = match tokens {
                Some(n) => choice.plan(graph, n, None)?.gate_elements().min(veil_runtime::ahead::AHEAD_LIMIT),
                None => veil_runtime::ahead::AHEAD_LIMIT,
            };
            elements as f64 * AHEAD_BYTES_PER_ELEMENT
        }
        _ => 0.0,
    };
    let peaks = (0..choice.topology.parties())
        .map(|id| {
            let measured = match (choice.name(), id) {
                ("mm", 0) => mib(792),
                ("mm", _) => mib(863),
                (_, id) if id == roles.model_owner => mib(1004),
                (_, id) if id == roles.data_owner => mib(85),
                _ if choice.security == Security::SemiHonest => mib(640),
                _ => mib(1595),
            };
            let server = choice.topology.is_computing(id) && choice.name() != "mm";
            ((measured * scale).max(FLOOR) + if server { ahead } else { 0.0 }) as u64
        })
        .collect();
    Ok(peaks)
}

/// Says, before a job starts, that the machine has less memory available than `needed` bytes
/// (what the job's parties on this machine take together), and what to do about it.
pub fn warn_if_short(needed: u64) {
    if let Some(available) = veil_runtime::memory::available_bytes()
        && available < needed
    {
        eprintln!("{}", short_of_memory(needed, available));
    }
}

/// The warning of [`warn_if_short`].
fn short_of_memory(needed: u64, available: u64) -> String {
    let gib = |b: u64| b as f64 / f64::from(1u32 << 30);
    format!(
        "warning: this job needs about {:.1} GiB of memory and {:.1} GiB are available: it may be \
         killed. Run it semi-honest (--security semi-honest), with its material made on demand \
         (--offline on-demand), on a shorter text, or with the parties on separate hosts (veil party)",
        gib(needed),
        gib(available)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use veil_runtime::families::Request;

    fn minilm_shaped() -> Graph {
        let mut g = Graph::default();
        g.weight("w", &[22_713_728]);
        g
    }

    fn choice(family: &str, security: Option<Security>) -> FamilyChoice {
        let request = Request { family: Some(family), security, ..Request::default() };
        FamilyChoice::new(&request, "mosformer").unwrap()
    }

    /// On the model they were measured on, the estimates are the measured peaks; they scale
    /// with the weights, and semi-honest servers take less.
    #[test]
    fn the_estimate_gives_the_measured_peaks_back_and_scales_with_the_weights() {
        let g = minilm_shaped();
        let mal = text_job_peaks(&choice("mosformer", None), &g, Some(13), &Material::OnDemand).unwrap();
        let mib = |b: u64| b >> 20;
        assert_eq!(mal.iter().map(|&b| mib(b)).collect::<Vec<_>>(), vec![1595, 1595, 1595, 85, 1004]);
        let semi = text_job_peaks(
            &choice("mosformer", Some(Security::SemiHonest)),
            &g,
            Some(13),
            &Material::OnDemand,
        )
        .unwrap();
        assert!(semi[0] < mal[0] / 2, "{semi:?}");
        let mm = text_job_peaks(&choice("mm", None), &g, Some(13), &Material::OnDemand).unwrap();
        assert_eq!(mm.iter().map(|&b| mib(b)).collect::<Vec<_>>(), vec![792, 863]);
        let mut big = Graph::default();
        big.weight("w", &[4 * 22_713_728]);
        let four = text_job_peaks(&choice("mosformer", None), &big, Some(13), &Material::OnDemand).unwrap();
        assert_eq!(mib(four[0]), 4 * 1595);
        let mut tiny = Graph::default();
        tiny.weight("w", &[10]);
        let floor = text_job_peaks(&choice("mosformer", None), &tiny, Some(13), &Material::OnDemand).unwrap();
        assert!(floor.iter().all(|&b| b == 64 << 20), "{floor:?}");
    }

    /// Material made ahead adds the plan's gate elements at each server (at most the limit of
    /// what a server makes ahead, also when the token count is not known yet).
    #[test]
    fn material_made_ahead_adds_the_plans_elements_at_the_servers() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../nn/tests/data/tiny-gpt2");
        let graph = veil_nn::bert::load_hf(&dir, false).unwrap().graph;
        let c = choice("mosformer", None);
        let demand = text_job_peaks(&c, &graph, Some(5), &Material::OnDemand).unwrap();
        let ahead = text_job_peaks(&c, &graph, Some(5), &Material::Ahead).unwrap();
        let elements = c.plan(&graph, 5, None).unwrap().gate_elements() as f64;
        for id in 0..3 {
            assert_eq!(ahead[id] - demand[id], (elements * AHEAD_BYTES_PER_ELEMENT) as u64);
        }
        assert_eq!(ahead[3..], demand[3..]);
        let unknown = text_job_peaks(&c, &graph, None, &Material::Ahead).unwrap();
        assert!(
            unknown[0] > ahead[0]
                && unknown[0] >= (veil_runtime::ahead::AHEAD_LIMIT as f64 * AHEAD_BYTES_PER_ELEMENT) as u64
        );
    }

    #[test]
    fn the_warning_says_what_to_do() {
        let w = short_of_memory(6 << 30, 2 << 30);
        assert!(w.contains("6.0 GiB") && w.contains("2.0 GiB"), "{w}");
        assert!(w.contains("--security semi-honest") && w.contains("--offline on-demand"), "{w}");
    }
}
