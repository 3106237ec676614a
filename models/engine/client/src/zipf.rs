//! Exact, seedable Zipf sampling over ranks 1..=n with P(k) ∝ k^-θ, by rejection-inversion (W. Hörmann and
//! G. Derflinger, "Rejection-inversion to generate variates from monotone discrete distributions", ACM TOMACS 6(3),
//! 1996). It inverts the integral H of the hat function h(x) = x^-θ over [1.5 - 1, n + 0.5] and accepts the rounded
//! point k unless it falls in the part of k's interval that lies above the histogram; the expected number of tries
//! is below 1.1 for every θ and n, and setup is O(1), so item counts of hundreds of millions cost nothing extra.

/// (e^t - 1) / t, stable near 0.
fn expm1_over(t: f64) -> f64 {
    if t.abs() > 1e-8 {
        t.exp_m1() / t
    } else {
        1.0 + t * 0.5 * (1.0 + t / 3.0 * (1.0 + 0.25 * t))
    }
}

/// ln(1 + t) / t, stable near 0.
fn log1p_over(t: f64) -> f64 {
    if t.abs() > 1e-8 {
        t.ln_1p() / t
    } else {
        1.0 - t * (0.5 - t * (1.0 / 3.0 - 0.25 * t))
    }
}

#[derive(Debug, Clone)]
pub struct Zipf {
    n: u64,
    theta: f64,
    h_x1: f64,
    h_n: f64,
    s: f64,
}

impl Zipf {
    /// Ranks 1..=n, exponent theta > 0.
    pub fn new(n: u64, theta: f64) -> Zipf {
        assert!(n >= 1 && theta > 0.0);
        let mut z = Zipf { n, theta, h_x1: 0.0, h_n: 0.0, s: 0.0 };
        z.h_x1 = z.big_h(1.5) - 1.0;
        z.h_n = z.big_h(n as f64 + 0.5);
        z.s = 2.0 - z.big_h_inv(z.big_h(2.5) - z.h(2.0));
        z
    }

    /// h(x) = x^-θ.
    fn h(&self, x: f64) -> f64 {
        (-self.theta * x.ln()).exp()
    }

    /// H(x) = (x^(1-θ) - 1) / (1 - θ) (ln x when θ = 1): an antiderivative of h.
    fn big_h(&self, x: f64) -> f64 {
        let lx = x.ln();
        expm1_over((1.0 - self.theta) * lx) * lx
    }

    fn big_h_inv(&self, y: f64) -> f64 {
        let t = (y * (1.0 - self.theta)).max(-1.0);
        (log1p_over(t) * y).exp()
    }

    /// One rank in 1..=n; `uniform` gives doubles in [0, 1).
    pub fn sample(&self, mut uniform: impl FnMut() -> f64) -> u64 {
        loop {
            let u = self.h_n + uniform() * (self.h_x1 - self.h_n);
            let x = self.big_h_inv(u);
            let k = ((x + 0.5) as u64).clamp(1, self.n);
            let kf = k as f64;
            if kf - x <= self.s || u >= self.big_h(kf + 0.5) - self.h(kf) {
                return k;
            }
        }
    }

    /// The exact probability of rank k (for tests and reports): k^-θ / Σ_{i≤n} i^-θ.
    pub fn pmf(&self, k: u64) -> f64 {
        let norm: f64 = (1..=self.n).map(|i| self.h(i as f64)).sum();
        self.h(k as f64) / norm
    }
}

/// A double in [0, 1) from 64 random bits.
#[inline]
pub fn unit(bits: u64) -> f64 {
    (bits >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kvsim_base::random::splitmix64;

    fn histogram(n: u64, theta: f64, draws: usize, seed: u64) -> Vec<u64> {
        let z = Zipf::new(n, theta);
        let mut s = seed;
        let mut hist = vec![0u64; n as usize + 1];
        for _ in 0..draws {
            let k = z.sample(|| unit(splitmix64(&mut s)));
            assert!((1..=n).contains(&k));
            hist[k as usize] += 1;
        }
        hist
    }

    /// Pearson's chi-square of the histogram against the pmf; with n - 1 degrees of freedom its mean is n - 1
    /// and its standard deviation sqrt(2(n - 1)).
    fn chi_square(n: u64, theta: f64, draws: usize, seed: u64) -> f64 {
        let hist = histogram(n, theta, draws, seed);
        let z = Zipf::new(n, theta);
        (1..=n)
            .map(|k| {
                let e = z.pmf(k) * draws as f64;
                let d = hist[k as usize] as f64 - e;
                d * d / e
            })
            .sum()
    }

    #[test]
    fn matches_the_analytic_pmf() {
        for &(n, theta) in &[(50u64, 0.99), (200, 0.5), (20, 1.0), (100, 1.5), (1, 0.99), (2, 0.99)] {
            let chi = chi_square(n, theta, 400_000, 7 + n);
            let dof = (n.max(2) - 1) as f64;
            // mean + 6 standard deviations: a real sampling bias of even 1% in the head blows far past this.
            assert!(chi < dof + 6.0 * (2.0 * dof).sqrt() + 10.0, "n={n} theta={theta}: chi-square {chi:.1}");
        }
    }

    #[test]
    fn a_biased_sampler_would_fail_the_check() {
        // The same statistic against the wrong exponent is enormous: the check has power.
        let draws = 400_000;
        let hist = histogram(50, 0.99, draws, 3);
        let wrong = Zipf::new(50, 0.9);
        let chi: f64 = (1..=50u64)
            .map(|k| {
                let e = wrong.pmf(k) * draws as f64;
                (hist[k as usize] as f64 - e).powi(2) / e
            })
            .sum();
        assert!(chi > 500.0, "{chi}");
    }

    #[test]
    fn large_item_counts_and_seeds() {
        let z = Zipf::new(192 << 20, 0.99);
        let mut a = 1u64;
        let mut b = 1u64;
        let xs: Vec<u64> = (0..1000).map(|_| z.sample(|| unit(splitmix64(&mut a)))).collect();
        let ys: Vec<u64> = (0..1000).map(|_| z.sample(|| unit(splitmix64(&mut b)))).collect();
        assert_eq!(xs, ys, "same seed, same ranks");
        assert!(xs.iter().all(|&k| (1..=192 << 20).contains(&k)));
        let ones = xs.iter().filter(|&&k| k == 1).count();
        // P(1) = 1 / H_{n,0.99} ≈ 0.046 for n = 192 Mi
        assert!((20..=80).contains(&ones), "{ones}");
    }
}
