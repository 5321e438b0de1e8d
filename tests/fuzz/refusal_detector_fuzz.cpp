// Refusal detection reads whatever a command prints. Input format (so seeds can be real
// outputs): the command text, a newline, the exit status, a newline, then the output. The
// output is streamed through OutputLines and RefusalDetector in chunks, as Caretz does, and the
// result must match detect_refusals() on the whole output; memory stays bounded. The output is
// also read as the stand-in's records file, whose records must read back as written, and
// detection runs again with those records as the runs of the programs the sandbox watched.

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>

#include "escalation/output_lines.h"
#include "escalation/refusal_detector.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/unit/escalation/fake_host.h"

using namespace caretz;
using caretz::fuzz::require;

namespace {

std::string_view take_line(std::string_view& rest) {
    auto nl = rest.find('\n');
    std::string_view line = rest.substr(0, nl);
    rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
    return line;
}

const testing::FakeHost& host() {
    static const testing::FakeHost fake = [] {
        testing::FakeHost h;
        h.paths = {"/etc/x",
                   "/etc/foo",
                   "/home/cztest/.ssh/id_ed25519",
                   "/home/cztest/.aws/credentials",
                   "/home/cztest/.config/caretz/config.json",
                   "/home/cztest/outside",
                   "/run/user/1000/bus",
                   "/var/lib/dpkg/lock",
                   "/usr/local/bin"};
        h.sockets = {"/var/run/docker.sock", "/run/docker.sock", "/run/dbus/system_bus_socket"};
        h.writable = {"/home/cztest", "/tmp"};
        return h;
    }();
    return fake;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string_view rest(reinterpret_cast<const char*>(data), size);
    std::string command(take_line(rest));
    int exit_code = std::atoi(std::string(take_line(rest).substr(0, 9)).c_str());
    std::string_view output = rest;

    static const SandboxPolicy policy = testing::test_policy({"/home/cztest/.cache/pip"});
    DetectionContext ctx{command, exit_code, "/home/cztest/work", policy, host()};

    RefusalDetector detector;
    OutputLines lines([&](std::string_view line) {
        require(line.size() <= OutputLines::kMaxLineBytes, "a line longer than kMaxLineBytes");
        require(line.find('\n') == std::string_view::npos, "a line holding a newline");
        detector.observe_line(line);
    });
    for (auto chunk : fuzz::chunks(output)) lines.feed(chunk);
    lines.finish();
    require(detector.stored_lines() <= RefusalDetector::kHeadLines + RefusalDetector::kTailLines,
            "the detector keeps more lines than its bound");
    require(detector.stored_bytes() <= (RefusalDetector::kHeadLines + RefusalDetector::kTailLines) *
                                           RefusalDetector::kMaxLineBytes,
            "the detector keeps more bytes than its bound");

    auto streamed = detector.finish(ctx);
    auto whole = detect_refusals(ctx, output);
    require(streamed == whole, "chunked output gives other refusals than the whole output");
    for (const auto& r : streamed) {
        require(!r.subject.empty(), "a refusal without a subject");
        require(r.evidence.size() <= 300, "evidence longer than 300 bytes");
    }
    if (exit_code == 0) {
        for (const auto& r : streamed)
            require(r.kind != RefusalKind::write && r.kind != RefusalKind::hidden,
                    "a write or hidden refusal for a command that succeeded");
    }

    const std::vector<ProgramRun> records = parse_program_runs(output);
    for (const auto& record : records)
        require(parse_program_runs(encode_program_run(record)) == std::vector<ProgramRun>{record},
                "a run's record that does not read back as written");
    ctx.program_runs = records;
    std::size_t sudo_refusals = 0;
    for (const auto& r : detector.finish(ctx)) {
        require(!r.subject.empty(), "a refusal without a subject");
        if (r.kind == RefusalKind::sudo) ++sudo_refusals;
    }
    require(sudo_refusals <= std::min<std::size_t>(records.size(), 8),
            "more sudo refusals than recorded runs of sudo, or than the bound");
    return 0;
}
