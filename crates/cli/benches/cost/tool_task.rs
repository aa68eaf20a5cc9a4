//! The 7-request tool task: a small Python project whose price parser fails on a thousands
//! separator, and a scripted model that fixes it the way a person would watch an agent do it:
//! search for the function, read it, read its test, run the tests, edit, run them again,
//! report. Seven requests on the main thread, run by tine and, with `TINE_BENCH_CLAUDE`, by
//! Claude Code on the same scenario. Its tool array has no Grep in 2.1.332, so where the
//! request offers no `Grep` the search is `grep` through Bash; Read, Edit and Bash take the
//! same inputs in both.

use serde_json::json;
use tine_e2e::Project;
use tine_e2e::tine_mock_api::{MockConfig, MockServer, Reply, RequestRecord, Rule, Scenario};

use crate::prefix::Breakdown;
use crate::{billed_equivalent, claude_code, k, memory_off, tine, verdict};

/// The task, as typed.
const TASK: &str = "test_parse_thousands fails on prices with a thousands separator; find \
                    parse_price, fix it and run the tests.";
/// What the task's first user message holds, and no other conversation's.
const TASK_MARKER: &str = "thousands separator; find parse_price";
const MAIN_REQUESTS: usize = 7;
pub(crate) const TARGET_VS_CLAUDE_CODE: f64 = 0.50;

const PRICE_PY: &str = r#""""Prices: parsing what people type and formatting what they see."""

from decimal import Decimal, ROUND_HALF_UP

CURRENCY_SYMBOLS = {"$": "USD", "€": "EUR", "£": "GBP"}


def parse_price(text):
    """Parse a price such as '$1,234.50' into cents."""
    text = text.strip().lstrip("$")
    dollars, _, cents = text.partition(".")
    return int(dollars) * 100 + int(cents.ljust(2, "0") or 0)


def format_price(cents):
    """Format cents as '$1,234.50'."""
    return "${:,}.{:02d}".format(cents // 100, cents % 100)


def apply_discount(cents, percent):
    """Take `percent` off, rounding half up to a whole cent."""
    kept = Decimal(cents) * (Decimal(100) - Decimal(percent)) / Decimal(100)
    return int(kept.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def currency_of(text):
    """The ISO code of the symbol a price starts with (USD when there is none)."""
    return CURRENCY_SYMBOLS.get(text.strip()[:1], "USD")
"#;

const CART_PY: &str = r#""""The cart: lines of (sku, quantity, unit price in cents)."""

from shop.price import apply_discount, format_price


class Cart:
    def __init__(self):
        self.lines = []

    def add(self, sku, quantity, unit_cents):
        self.lines.append((sku, quantity, unit_cents))

    def total(self, discount_percent=0):
        cents = sum(quantity * unit for _, quantity, unit in self.lines)
        return apply_discount(cents, discount_percent)

    def receipt(self):
        rows = [f"{sku} x{quantity}: {format_price(quantity * unit)}" for sku, quantity, unit in self.lines]
        rows.append(f"total: {format_price(self.total())}")
        return "\n".join(rows)
"#;

const TEST_PRICE_PY: &str = r#"import unittest

from shop.price import apply_discount, currency_of, format_price, parse_price


class PriceTest(unittest.TestCase):
    def test_parse_plain(self):
        self.assertEqual(parse_price("$12.50"), 1250)

    def test_parse_whole(self):
        self.assertEqual(parse_price("7"), 700)

    def test_parse_thousands(self):
        self.assertEqual(parse_price("$1,234.50"), 123450)

    def test_format(self):
        self.assertEqual(format_price(123450), "$1,234.50")

    def test_discount_rounds_half_up(self):
        self.assertEqual(apply_discount(999, 50), 500)

    def test_currency(self):
        self.assertEqual(currency_of("€3"), "EUR")


if __name__ == "__main__":
    unittest.main()
"#;

const TEST_CART_PY: &str = r#"import unittest

from shop.cart import Cart


class CartTest(unittest.TestCase):
    def test_total(self):
        cart = Cart()
        cart.add("A1", 2, 1250)
        cart.add("B2", 1, 99)
        self.assertEqual(cart.total(), 2599)
        self.assertEqual(cart.total(10), 2339)


if __name__ == "__main__":
    unittest.main()
"#;

fn project() -> Project {
    let project = Project::new();
    project.write(
        "README.md",
        "# shop\n\nA small web shop. Run the tests with `python3 -m unittest`.\n",
    );
    project.write("shop/__init__.py", "");
    project.write("shop/price.py", PRICE_PY);
    project.write("shop/cart.py", CART_PY);
    project.write("tests/__init__.py", "");
    project.write("tests/test_price.py", TEST_PRICE_PY);
    project.write("tests/test_cart.py", TEST_CART_PY);
    crate::git_commit_all(project.cwd());
    project
}

/// The model: step `n` answers the main thread's request with `n` assistant turns before it.
fn scenario(project: &Project) -> Scenario {
    let cwd = project.cwd();
    let price = cwd.join("shop/price.py").display().to_string();
    let test = cwd.join("tests/test_price.py").display().to_string();
    let run_tests = json!({"command": "python3 -m unittest -q", "description": "Run the tests"});
    let step = |n: usize| {
        Rule::new()
            .first_user_contains(TASK_MARKER)
            .assistant_turns(n)
    };
    Scenario::new()
        .rule(
            step(0)
                .has_tool("Grep")
                .reply(Reply::text("Finding it.").with_tool_use(
                    "Grep",
                    json!({"pattern": "def parse_price", "output_mode": "content"}),
                )),
        )
        .rule(step(0).reply(Reply::text("Finding it.").with_tool_use(
            "Bash",
            json!({"command": "grep -rn 'def parse_price' .", "description": "Find parse_price"}),
        )))
        .rule(step(1).reply(Reply::tool_use("Read", json!({"file_path": price}))))
        .rule(step(2).reply(Reply::tool_use("Read", json!({"file_path": test}))))
        .rule(step(3).reply(Reply::tool_use("Bash", run_tests.clone())))
        .rule(step(4).reply(
            Reply::text("int() chokes on the comma: dropping separators first.").with_tool_use(
                "Edit",
                json!({
                    "file_path": price,
                    "old_string": "text = text.strip().lstrip(\"$\")",
                    "new_string": "text = text.strip().lstrip(\"$\").replace(\",\", \"\")",
                }),
            ),
        ))
        .rule(step(5).reply(Reply::tool_use("Bash", run_tests)))
        .rule(step(6).reply(Reply::text(
            "Fixed: parse_price now drops thousands separators before converting \
             (shop/price.py); all 7 tests pass.",
        )))
        .default_reply(Reply::text("Nothing to save."))
}

/// What one agent's run of the task cost.
struct TaskRun {
    /// Every answered request, in order: (what it was, usage, billed-equivalent).
    requests: Vec<(String, [u64; 3], f64)>,
    /// Requests the mock refused (no usage, nothing billed).
    refused: usize,
    first: Option<Breakdown>,
    fixed: bool,
}

impl TaskRun {
    fn total(&self) -> f64 {
        self.requests.iter().map(|(_, _, b)| b).sum()
    }

    fn main_total(&self) -> f64 {
        self.requests
            .iter()
            .filter(|(what, ..)| what.starts_with("main"))
            .map(|(_, _, b)| b)
            .sum()
    }
}

fn collect(records: &[RequestRecord], project: &Project) -> TaskRun {
    let mut requests = Vec::new();
    let mut refused = 0;
    let mut first = None;
    for record in records.iter().filter(|r| r.path == "/v1/messages") {
        let Some(usage) = record.usage else {
            refused += 1;
            continue;
        };
        let body = record.json().unwrap_or_default();
        let what = match record.rule.as_deref() {
            Some("default") | None => {
                if String::from_utf8_lossy(&record.body).contains(crate::EXTRACTION_MARKER) {
                    "memory extraction".to_owned()
                } else {
                    "other".to_owned()
                }
            }
            Some(_) => format!("main {}", requests.len() + 1),
        };
        if first.is_none() {
            first = Some(Breakdown::of(&body));
        }
        requests.push((
            what,
            [
                usage.input_tokens,
                usage.cache_creation_input_tokens,
                usage.cache_read_input_tokens,
            ],
            billed_equivalent(record),
        ));
    }
    let fixed = project
        .read("shop/price.py")
        .contains(".replace(\",\", \"\")");
    TaskRun {
        requests,
        refused,
        first,
        fixed,
    }
}

const ALLOWED: &[&str] = &["Edit", "Bash(python3 -m unittest:*)", "Bash(grep:*)"];

async fn run_tine() -> TaskRun {
    let project = project();
    let server = MockServer::start(MockConfig::new(scenario(&project)))
        .await
        .unwrap();
    let mut command = tine(&project, &server, false);
    command.args(["-p", TASK, "--allowedTools"]).args(ALLOWED);
    let output = command.output().await.unwrap();
    assert!(
        output.status.success(),
        "tine failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let run = collect(&server.requests(), &project);
    server.stop().await;
    run
}

async fn run_tine_memory_off() -> f64 {
    let project = project();
    let server = MockServer::start(MockConfig::new(scenario(&project)))
        .await
        .unwrap();
    let mut command = tine(&project, &server, false);
    memory_off(&mut command);
    command.args(["-p", TASK, "--allowedTools"]).args(ALLOWED);
    assert!(command.output().await.unwrap().status.success());
    let run = collect(&server.requests(), &project);
    server.stop().await;
    run.total()
}

async fn run_claude(binary: &std::ffi::OsString) -> Option<TaskRun> {
    let project = project();
    let server = MockServer::start(MockConfig::new(scenario(&project)))
        .await
        .unwrap();
    let mut command = claude_code::command(binary, &project, &server);
    command.args(["-p", TASK, "--allowedTools"]).args(ALLOWED);
    let output = command.output().await.unwrap();
    if !output.status.success() {
        println!(
            "   Claude Code failed ({}): {}",
            output.status,
            String::from_utf8_lossy(&output.stderr).trim()
        );
        server.stop().await;
        return None;
    }
    let run = collect(&server.requests(), &project);
    server.stop().await;
    Some(run)
}

fn print_requests(who: &str, run: &TaskRun) {
    println!(
        "   {who}: {} requests answered{}; uncached / cache write / cache read, billed-equivalent",
        run.requests.len(),
        if run.refused > 0 {
            format!(" ({} refused by the mock, not billed)", run.refused)
        } else {
            String::new()
        }
    );
    for (what, [input, write, read], beq) in &run.requests {
        println!(
            "      {what:<18} {input:>6} {write:>7} {read:>7}   {}",
            k(*beq)
        );
    }
}

pub(crate) async fn part() {
    println!(
        "5. the {MAIN_REQUESTS}-request tool task (grep, read, read, test, edit, test, report), billed-equivalent input"
    );
    let ours = run_tine().await;
    let main = ours
        .requests
        .iter()
        .filter(|(w, ..)| w.starts_with("main"))
        .count();
    assert_eq!(main, MAIN_REQUESTS, "tine's main-thread requests");
    assert!(ours.fixed, "tine did not apply the fix");
    if let Some(first) = &ours.first {
        first.print("tine's first request");
    }
    print_requests("tine", &ours);
    let off = run_tine_memory_off().await;
    println!(
        "   tine {} (main thread {}, memory extraction {}; memory off {})",
        k(ours.total()),
        k(ours.main_total()),
        k(ours.total() - ours.main_total()),
        k(off),
    );
    let Some(binary) = claude_code::binary() else {
        println!(
            "   Claude Code: set {} to its binary to run it on the same scenario",
            claude_code::CLAUDE_ENV
        );
        return;
    };
    let Some(theirs) = run_claude(&binary).await else {
        return;
    };
    if let Some(first) = &theirs.first {
        first.print("Claude Code's first request");
    }
    print_requests("Claude Code", &theirs);
    let ratio = ours.total() / theirs.total();
    println!(
        "   tine {} vs Claude Code {} (fixed: {}) = {ratio:.2}x   target <= {TARGET_VS_CLAUDE_CODE}x   {}",
        k(ours.total()),
        k(theirs.total()),
        theirs.fixed,
        verdict(ratio <= TARGET_VS_CLAUDE_CODE),
    );
}
