//! SSE parse + accumulate throughput (filled in below).
fn main() {}
