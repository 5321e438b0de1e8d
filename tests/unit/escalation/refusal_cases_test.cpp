// Runs the detector over the real outputs stored in cases/*.txt. The format is described at the
// top of cases/write.txt; capture_cases.py re-captures the outputs.

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "escalation/output_lines.h"
#include "escalation/refusal_detector.h"
#include "tests/unit/escalation/fake_host.h"

using namespace caretz;

namespace {

namespace fs = std::filesystem;

struct Case {
    std::string file;
    std::string name;
    std::map<std::string, std::vector<std::string>> fields;
    std::string output;

    std::string field(const std::string& key, const std::string& fallback = "") const {
        const auto it = fields.find(key);
        return it == fields.end() ? fallback : it->second.front();
    }

    std::vector<std::string> words(const std::string& key) const {
        std::vector<std::string> result;
        std::istringstream in(field(key));
        for (std::string word; in >> word;) result.push_back(word);
        return result;
    }
};

std::string unescape(const std::string& text) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] != '\\' || i + 1 == text.size()) {
            out += text[i];
            continue;
        }
        const char c = text[++i];
        if (c == 'e') out += '\x1b';
        if (c == 'r') out += '\r';
        if (c == 't') out += '\t';
        if (c == '\\') out += '\\';
        if (c == 'x') {
            out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
            i += 2;
        }
    }
    return out;
}

std::string joined_output(std::vector<std::string> lines, bool escaped) {
    while (!lines.empty() && lines.back().empty()) lines.pop_back();
    std::string text;
    for (const auto& line : lines) text += line + "\n";
    return escaped ? unescape(text) : text;
}

std::vector<Case> read_case_file(const fs::path& path) {
    std::vector<Case> cases;
    std::ifstream in(path);
    std::vector<std::string> output;
    bool in_output = false;
    bool escaped = false;
    auto close_case = [&] {
        if (!cases.empty()) cases.back().output = joined_output(output, escaped);
        output.clear();
        in_output = false;
    };
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("=== ")) {
            close_case();
            cases.push_back({path.filename().string(), line.substr(4), {}, {}});
        } else if (cases.empty()) {
            continue;  // the file's preamble
        } else if (in_output) {
            output.push_back(line);
        } else if (line.starts_with("--- output")) {
            in_output = true;
            escaped = line == "--- output escaped";
        } else if (const auto colon = line.find(": "); colon != std::string::npos) {
            cases.back().fields[line.substr(0, colon)].push_back(line.substr(colon + 2));
        }
    }
    close_case();
    return cases;
}

std::vector<Case> load_cases() {
    const fs::path dir = fs::path(__FILE__).parent_path() / "cases";
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.path().extension() == ".txt") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    std::vector<Case> cases;
    for (const auto& file : files) {
        auto more = read_case_file(file);
        cases.insert(cases.end(), more.begin(), more.end());
    }
    return cases;
}

std::vector<std::string> describe(const std::vector<Refusal>& refusals) {
    std::vector<std::string> lines;
    for (const auto& r : refusals)
        lines.push_back(std::string(to_string(r.kind)) + " " + r.subject);
    return lines;
}

std::vector<std::string> expected_refusals(const Case& c) {
    const auto it = c.fields.find("expect");
    if (it == c.fields.end() || it->second == std::vector<std::string>{"none"}) return {};
    return it->second;
}

// An expected subject ending in * stands for a temporary name the tool made up.
bool matches(const std::string& actual, const std::string& expected) {
    if (expected.ends_with('*')) return actual.starts_with(expected.substr(0, expected.size() - 1));
    return actual == expected;
}

bool all_match(const std::vector<std::string>& actual, const std::vector<std::string>& expected) {
    if (actual.size() != expected.size()) return false;
    for (std::size_t i = 0; i < actual.size(); ++i)
        if (!matches(actual[i], expected[i])) return false;
    return true;
}

std::vector<std::string> rendered_lines(const std::string& output) {
    std::vector<std::string> lines;
    OutputLines render([&lines](std::string_view line) { lines.emplace_back(line); });
    render.feed(output);
    render.finish();
    return lines;
}

// Evidence is one of the rendered lines, trimmed and cut to 300 bytes.
bool is_evidence_of(const std::string& evidence, const std::string& output) {
    if (evidence.empty() || evidence.size() > 300) return false;
    for (const auto& line : rendered_lines(output))
        if (line.find(evidence) != std::string::npos) return true;
    return false;
}

// "sudo-run: CWD | ARG0 ARG1 ...", one line per run of sudo the stand-in recorded.
std::vector<ProgramRun> sudo_runs(const Case& c) {
    std::vector<ProgramRun> runs;
    const auto it = c.fields.find("sudo-run");
    if (it == c.fields.end()) return runs;
    for (const auto& line : it->second) {
        const auto bar = line.find(" | ");
        REQUIRE(bar != std::string::npos);
        ProgramRun record{"sudo", line.substr(0, bar), {}};
        std::istringstream in(line.substr(bar + 3));
        for (std::string word; in >> word;) record.argv.push_back(word);
        runs.push_back(record);
    }
    return runs;
}

std::vector<Refusal> run(const Case& c) {
    testing::FakeHost host;
    host.paths = c.words("host-paths");
    host.sockets = c.words("host-sockets");
    host.writable = c.words("host-writable");
    SandboxPolicy policy = testing::test_policy(c.words("writable"), c.field("docker-host"));
    for (const auto& hidden : c.words("hidden"))
        policy.hidden.push_back(absolute_path(hidden, policy.workspace, policy.home));
    policy.allow_docker = c.field("allow-docker") == "yes";
    DetectionContext ctx{.command = c.field("command"),
                         .exit_code = std::stoi(c.field("exit", "0")),
                         .cwd = c.field("cwd", "/home/cztest/work"),
                         .policy = policy,
                         .host = host,
                         .docker_host = c.field("docker-host")};
    if (!c.field("bus-socket").empty()) ctx.system_bus_socket = c.field("bus-socket");
    // The command's environment: where the user's session bus is ($XDG_RUNTIME_DIR).
    for (const auto& assignment : c.words("env"))
        ctx.env[assignment.substr(0, assignment.find('='))] =
            assignment.substr(assignment.find('=') + 1);
    if (c.field("sudo-watch") != "no") ctx.program_runs = sudo_runs(c);
    return detect_refusals(ctx, c.output);
}

}  // namespace

TEST_CASE("Detection on captured outputs of real tools", "[refusal_cases]") {
    for (const Case& c : load_cases()) {
        DYNAMIC_SECTION(c.file << ": " << c.name) {
            INFO("command: " << c.field("command"));
            INFO("output:\n" << c.output);
            const auto refusals = run(c);
            const auto actual = describe(refusals);
            const auto expected = expected_refusals(c);
            CAPTURE(actual, expected);
            CHECK(all_match(actual, expected));
            for (const auto& r : refusals) CHECK(is_evidence_of(r.evidence, c.output));
        }
    }
}

TEST_CASE("The captured cases cover every kind both ways", "[refusal_cases]") {
    const auto cases = load_cases();
    CHECK(cases.size() >= 80);
    std::set<std::string> positive_kinds;
    std::set<std::string> negative_files;
    for (const Case& c : cases) {
        REQUIRE(c.fields.count("command") == 1);
        REQUIRE(c.fields.count("exit") == 1);
        REQUIRE(c.fields.count("expect") >= 1);
        REQUIRE(!c.output.empty());
        if (c.field("capture") == "none") REQUIRE(!c.field("source").empty());
        for (const auto& e : expected_refusals(c)) positive_kinds.insert(e.substr(0, e.find(' ')));
        if (expected_refusals(c).empty()) negative_files.insert(c.file);
    }
    CHECK(positive_kinds == std::set<std::string>{"bus", "docker", "hidden", "sudo", "write"});
    for (const char* file :
         {"bus.txt", "docker.txt", "hidden.txt", "network.txt", "sudo.txt", "write.txt"})
        CHECK(negative_files.count(file) == 1);
}
