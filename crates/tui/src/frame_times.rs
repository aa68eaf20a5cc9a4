//! How long frames take to draw, kept as a histogram (fixed size, so [`crate::LoopStats`] stays
//! `Copy` and recording costs nothing): wall time and this thread's CPU time of each
//! `terminal.draw` (layout of the visible rows, the buffer diff, the write to the terminal).
//! The loop logs the frames of each turn when it ends (the file log, never the screen), which
//! is what `cargo xtask bench tui` reads from the real binary.

use std::time::Duration;

/// Width of one bucket.
const BUCKET: Duration = Duration::from_micros(50);
/// Buckets up to 16 ms (a 60 Hz frame); longer frames count in the last one and in `max`.
const BUCKETS: usize = 320;

/// A histogram of frame times.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct FrameTimes {
    wall: [u32; BUCKETS],
    cpu: [u32; BUCKETS],
    frames: u64,
    max_wall: Duration,
    max_cpu: Duration,
}

impl std::fmt::Debug for FrameTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameTimes")
            .field("frames", &self.frames)
            .field("wall_p50", &self.wall(0.5))
            .field("wall_p99", &self.wall(0.99))
            .field("max_wall", &self.max_wall)
            .field("cpu_p99", &self.cpu(0.99))
            .finish()
    }
}

impl Default for FrameTimes {
    fn default() -> Self {
        Self {
            wall: [0; BUCKETS],
            cpu: [0; BUCKETS],
            frames: 0,
            max_wall: Duration::ZERO,
            max_cpu: Duration::ZERO,
        }
    }
}

/// One percentile of a histogram: the upper bound of its bucket.
fn percentile(buckets: &[u32; BUCKETS], frames: u64, q: f64) -> Duration {
    if frames == 0 {
        return Duration::ZERO;
    }
    // The rank of the q-th frame, 1-based, rounded up.
    let rank = ((frames as f64) * q).ceil().max(1.0) as u64;
    let mut seen = 0u64;
    for (i, count) in buckets.iter().enumerate() {
        seen += u64::from(*count);
        if seen >= rank {
            return BUCKET * u32::try_from(i + 1).unwrap_or(u32::MAX);
        }
    }
    BUCKET * u32::try_from(BUCKETS).unwrap_or(u32::MAX)
}

fn bucket(d: Duration) -> usize {
    let i = d.as_nanos() / BUCKET.as_nanos();
    usize::try_from(i).unwrap_or(usize::MAX).min(BUCKETS - 1)
}

impl FrameTimes {
    /// One frame: its wall time, and its thread-CPU time where the clock is readable.
    pub fn record(&mut self, wall: Duration, cpu: Option<Duration>) {
        self.frames += 1;
        self.wall[bucket(wall)] += 1;
        self.max_wall = self.max_wall.max(wall);
        // Without a thread clock, the wall time stands for it.
        let cpu = cpu.unwrap_or(wall);
        self.cpu[bucket(cpu)] += 1;
        self.max_cpu = self.max_cpu.max(cpu);
    }

    /// Frames recorded.
    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// The q-th quantile (0..=1) of the wall time, to 50 µs.
    pub fn wall(&self, q: f64) -> Duration {
        percentile(&self.wall, self.frames, q)
    }

    /// The q-th quantile (0..=1) of the CPU time, to 50 µs.
    pub fn cpu(&self, q: f64) -> Duration {
        percentile(&self.cpu, self.frames, q)
    }

    /// The longest frame, wall time.
    pub fn max_wall(&self) -> Duration {
        self.max_wall
    }

    /// The longest frame, thread-CPU time.
    pub fn max_cpu(&self) -> Duration {
        self.max_cpu
    }

    /// Says what was recorded in the log (at info), as `what`.
    pub fn log(&self, what: &'static str) {
        if self.frames == 0 {
            return;
        }
        let us = |d: Duration| u64::try_from(d.as_micros()).unwrap_or(u64::MAX);
        tracing::info!(
            what,
            frames = self.frames,
            wall_p50_us = us(self.wall(0.5)),
            wall_p99_us = us(self.wall(0.99)),
            wall_max_us = us(self.max_wall),
            cpu_p50_us = us(self.cpu(0.5)),
            cpu_p99_us = us(self.cpu(0.99)),
            cpu_max_us = us(self.max_cpu),
            "frame times"
        );
    }
}

/// This thread's CPU time (the frame is drawn on one thread, without awaiting).
pub(crate) fn thread_cpu() -> Option<Duration> {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
    Some(Duration::from(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_come_from_the_buckets() {
        let mut t = FrameTimes::default();
        for _ in 0..98 {
            t.record(Duration::from_micros(120), Some(Duration::from_micros(100)));
        }
        t.record(Duration::from_millis(3), None);
        t.record(Duration::from_millis(40), None);
        assert_eq!(t.frames(), 100);
        assert_eq!(t.wall(0.5), Duration::from_micros(150));
        assert_eq!(
            t.cpu(0.5),
            Duration::from_micros(150),
            "100 µs is in the third bucket"
        );
        assert_eq!(t.wall(0.99), Duration::from_micros(3050));
        assert_eq!(
            t.wall(1.0),
            Duration::from_millis(16),
            "past the last bucket"
        );
        assert_eq!(t.max_wall(), Duration::from_millis(40));
        assert_eq!(FrameTimes::default().wall(0.99), Duration::ZERO);
    }
}
