#include "sandbox/network/network_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "sandbox/network/network_gate.h"
#include "tests/unit/read_to_end.h"

using namespace caretz;

namespace {

std::pair<UniqueFd, UniqueFd> socket_pair() {
    int fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    return {UniqueFd(fds[0]), UniqueFd(fds[1])};
}

// Room for a few relay buffers in the socket, so a test can queue them before the relay runs.
void widen(int fd) {
    int bytes = 4 * static_cast<int>(RelayLoop::kBufferBytes);
    REQUIRE(::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &bytes, sizeof bytes) == 0);
}

}  // namespace

TEST_CASE("An end of input that comes right behind a burst is passed on", "[network_relay]") {
    // Three full buffers and the end of input, all waiting before the relay looks: one event
    // reads them all, and the half-close must not wait for an event that never comes.
    auto [client, client_side] = socket_pair();
    auto [server_side, server] = socket_pair();
    widen(client.get());
    widen(server_side.get());
    const std::string burst(3 * RelayLoop::kBufferBytes, 'b');
    REQUIRE(::write(client.get(), burst.data(), burst.size()) ==
            static_cast<ssize_t>(burst.size()));
    ::shutdown(client.get(), SHUT_WR);

    RelayLoop relay;
    relay.add_pair(std::move(client_side), std::move(server_side));
    for (int i = 0; i < 5; ++i) relay.run_once(20);

    ::fcntl(server.get(), F_SETFL, O_NONBLOCK);
    std::string seen;
    char buf[65536];
    ssize_t n;
    while ((n = ::read(server.get(), buf, sizeof buf)) > 0)
        seen.append(buf, static_cast<size_t>(n));
    CHECK(seen.size() == burst.size());
    CHECK(n == 0);  // the end of input, not "nothing yet"
}

TEST_CASE("The relay streams both ways and passes each end of input on", "[network_relay]") {
    auto [client, client_side] = socket_pair();
    auto [server_side, server] = socket_pair();
    RelayLoop relay;
    relay.add_pair(std::move(client_side), std::move(server_side));
    std::atomic<bool> stop{false};
    std::thread loop([&] {
        while (!stop) relay.run_once(20);
    });

    // Far more than the relay buffers: it has to wait for the reader again and again.
    std::string upload(8 * 1024 * 1024, '\0');
    for (size_t i = 0; i < upload.size(); ++i) upload[i] = static_cast<char>(i * 7 + i / 4096);
    std::thread writer([&, fd = client.get()] {
        for (std::string_view rest = upload; !rest.empty();) {
            ssize_t n = ::write(fd, rest.data(), rest.size());
            if (n <= 0) break;
            rest.remove_prefix(static_cast<size_t>(n));
        }
        ::shutdown(fd, SHUT_WR);
    });
    CHECK(read_to_end(server.get()) == upload);  // ends: the client's half-close came through
    writer.join();

    const std::string answer = "answer after the upload";
    ::write(server.get(), answer.data(), answer.size());
    server.reset();
    CHECK(read_to_end(client.get()) == answer);

    // Both directions ended, so the pair is gone; the event that passed the last end of input
    // on closed it, and the loop is stopped before its state is read.
    stop = true;
    loop.join();
    CHECK(relay.pair_count() == 0);
}

TEST_CASE("A question waits until the pump stands still, and the pump until it is answered",
          "[network_gate]") {
    QuestionGate gate;
    gate.set_pump_running(true);
    std::atomic<bool> asking{false}, answered{false}, pump_released{false};
    std::thread question([&] {
        gate.pause();
        asking = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        answered = true;
        gate.resume();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK_FALSE(asking);  // the pump has not looked at the gate yet

    pollfd p{gate.fd(), POLLIN, 0};
    REQUIRE(::poll(&p, 1, 1000) == 1);
    gate.hold();
    pump_released = true;
    CHECK(answered);  // hold() returned only after the answer
    question.join();
    CHECK(::poll(&p, 1, 0) == 0);  // nothing more to hold for

    gate.hold();  // a stray wake-up holds nothing
}

TEST_CASE("Without a pump a question goes ahead at once", "[network_gate]") {
    QuestionGate gate;
    gate.pause();
    gate.resume();
    gate.set_pump_running(true);
    std::thread question([&] {
        gate.pause();
        gate.resume();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    gate.set_pump_running(false);  // the command ended before its pump saw the gate
    question.join();
}
