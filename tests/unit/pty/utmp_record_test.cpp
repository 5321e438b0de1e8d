#include "pty/utmp_record.h"

#include <signal.h>

#include <catch2/catch.hpp>

#include "pty/pty.h"

namespace {

volatile sig_atomic_t g_sigchld_count = 0;
void count_sigchld(int) {
    g_sigchld_count = g_sigchld_count + 1;
}

}  // namespace

TEST_CASE("utmp registration never fails loudly and resends SIGCHLD", "[utmp]") {
    struct sigaction counting {};
    counting.sa_handler = count_sigchld;
    sigemptyset(&counting.sa_mask);
    struct sigaction before {};
    ::sigaction(SIGCHLD, &counting, &before);
    g_sigchld_count = 0;
    {
        caretz::Pty pty = caretz::Pty::open({24, 80});
        caretz::UtmpRecord record(pty.master(), "caretz-test");
        // libutempter's helper exits while SIGCHLD is at SIG_DFL; ours must still hear of it.
        CHECK(g_sigchld_count >= 1);
    }
    ::sigaction(SIGCHLD, &before, nullptr);
}
