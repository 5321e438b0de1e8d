#include "sandbox/supervisor_protocol.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "pty/pty.h"

using namespace caretz;

TEST_CASE("job reports survive the trip through a job_reply frame", "[supervisor]") {
    JobReport report;
    report.state = JobReport::State::killed;
    report.status = 15;
    report.output_head = std::string("head\0with nul\n", 14);
    report.output_tail = "tail\n";
    report.output_bytes = 123456789012ULL;
    auto back = decode_job_report(encode_job_report(report));
    REQUIRE(back);
    CHECK(back->state == JobReport::State::killed);
    CHECK(back->status == 15);
    CHECK(back->output_head == report.output_head);
    CHECK(back->output_tail == report.output_tail);
    CHECK(back->output_bytes == report.output_bytes);
}

TEST_CASE("job replies that are not reports decode to nothing", "[supervisor]") {
    CHECK_FALSE(decode_job_report(kJobUnknown));
    CHECK_FALSE(decode_job_report("9 0 0 0\n"));
    CHECK_FALSE(decode_job_report("0 0 10 50\nshort"));
}

TEST_CASE("payloads split at NUL bytes", "[supervisor]") {
    CHECK(split_payload(std::string("1\0/home/u\0echo a", 16)) ==
          std::vector<std::string>{"1", "/home/u", "echo a"});
    CHECK(split_payload("") == std::vector<std::string>{""});
}

TEST_CASE("a start_shell frame carries the PTY's ends to the side that takes descriptors",
          "[supervisor]") {
    int sockets[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) == 0);
    UniqueFd host(sockets[0]), supervisor(sockets[1]);
    Pty pty = Pty::open({24, 80});
    REQUIRE(send_frame(host.get(), Frame::resize, "24x80"));
    REQUIRE(send_frame(host.get(), Frame::start_shell, std::string("/\0Ntrue", 7),
                       {pty.master(), pty.slave()}));
    FrameReader reader;
    std::vector<FrameReader::Message> frames;
    while (frames.size() < 2) {
        REQUIRE(reader.read_with_fds_from(supervisor.get()));
        while (auto m = reader.next()) frames.push_back(*m);
    }
    CHECK(frames[1].type == Frame::start_shell);
    CHECK(frames[1].payload == std::string("/\0Ntrue", 7));
    std::vector<UniqueFd> ends = reader.take_fds();
    REQUIRE(ends.size() == 2);
    struct stat sent {
    }, received{};
    REQUIRE(::fstat(pty.slave(), &sent) == 0);
    REQUIRE(::fstat(ends[1].get(), &received) == 0);
    CHECK(received.st_rdev == sent.st_rdev);
    CHECK(::isatty(ends[0].get()));
    CHECK(reader.take_fds().empty());
}

TEST_CASE("descriptors sent to a plain reader are closed unseen", "[supervisor]") {
    int sockets[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) == 0);
    UniqueFd supervisor(sockets[0]), host(sockets[1]);
    Pty pty = Pty::open({24, 80});
    REQUIRE(send_frame(supervisor.get(), Frame::output, "x", {pty.master()}));
    FrameReader reader;
    std::optional<FrameReader::Message> m;
    while (!m) {
        REQUIRE(reader.read_from(host.get()));
        m = reader.next();
    }
    CHECK(m->payload == "x");
    CHECK(reader.take_fds().empty());
}
