#include "sandbox/supervisor_protocol.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "pty/fd_io.h"
#include "pty/pty.h"
#include "sandbox/layer_gate.h"
#include "sandbox/session_supervisor.h"

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

namespace {

// The session supervisor in a child, on `control` and with the cache layer's `gate`, in a view
// of the host it cannot change (it makes its folder at the root).
pid_t supervisor_asked_for_a_shell(int control, int gate) {
    const pid_t pid = ::fork();
    if (pid == 0) {
        mount_attr read_only{};
        read_only.attr_set = MOUNT_ATTR_RDONLY;
        if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0 ||
            ::syscall(SYS_mount_setattr, AT_FDCWD, "/", 0, &read_only, sizeof read_only) != 0)
            ::_exit(90);
        ::dup2(control, kSupervisorControlFd);
        ::dup2(gate, kLayerGateFd);
        try {
            ::_exit(run_session_supervisor());
        } catch (...) {
            ::_exit(91);  // not back into the test's own code
        }
    }
    ::close(control);
    ::close(gate);
    return pid;
}

// Whether the supervisor on `host` said it started a shell before it ended or fell silent.
bool shell_started(int host, int waiting_ms) {
    FrameReader reader;
    pollfd ready{host, POLLIN, 0};
    while (::poll(&ready, 1, waiting_ms) == 1 && reader.read_from(host))
        while (auto m = reader.next())
            if (m->type == Frame::shell_started) return true;
    return false;
}

int exit_status(pid_t pid) {
    int status = 0;
    return ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("the supervisor starts no shell before the cache layer's go-ahead", "[supervisor]") {
    for (const bool go_ahead : {true, false}) {
        int control[2], gate[2];
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, control) == 0);
        REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, gate) == 0);
        UniqueFd host(control[0]), host_gate(gate[0]);
        Pty pty = Pty::open({24, 80});
        const pid_t pid = supervisor_asked_for_a_shell(control[1], gate[1]);
        REQUIRE(
            send_frame(host.get(), Frame::setup, std::string("n0nce\0/bin/bash\0/\0terminal", 26)));
        REQUIRE(send_frame(host.get(), Frame::start_shell, std::string("/\0Ntrue", 7),
                           {pty.master(), pty.slave()}));
        // The sandbox's mount namespace comes over as the supervisor starts.
        char said[8];
        std::vector<UniqueFd> handed;
        REQUIRE(receive_with_fds(host_gate.get(), said, sizeof said, handed) == 1);
        CHECK(handed.size() == 1);
        // Asked for a shell, it starts none while the go-ahead is missing.
        CHECK_FALSE(shell_started(host.get(), 500));
        if (go_ahead) {
            REQUIRE(send_all(host_gate.get(), "g"));
            CHECK(shell_started(host.get(), 5000));
            host.reset();  // the supervisor ends with Caretz's end of the socket
            CHECK(exit_status(pid) == 0);
        } else {
            // Caretz could not put the layer in: the supervisor ends, having started nothing.
            host_gate.reset();
            CHECK_FALSE(shell_started(host.get(), 5000));
            CHECK(exit_status(pid) == 126);
        }
    }
}
