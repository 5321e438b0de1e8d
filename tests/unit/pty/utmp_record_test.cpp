#include "pty/utmp_record.h"

#include <paths.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "pty/pty.h"

namespace {

volatile sig_atomic_t g_sigchld_count = 0;
void count_sigchld(int) {
    g_sigchld_count = g_sigchld_count + 1;
}

// The line utmp knows `pty` by ("pts/3").
std::string line_of(const caretz::Pty& pty) {
    return pty.slave_path().substr(5);
}

// Whether utmp can be written here (a utmp file, libutempter's helper able to record in it).
bool utmp_works() {
    caretz::Pty pty = caretz::Pty::open({24, 80});
    return caretz::UtmpRecord(pty.master(), "caretz-test").registered();
}

}  // namespace

TEST_CASE("utmp registration never fails loudly, nor takes a child's SIGCHLD", "[utmp]") {
    struct sigaction counting {};
    counting.sa_handler = count_sigchld;
    sigemptyset(&counting.sa_mask);
    struct sigaction before {};
    ::sigaction(SIGCHLD, &counting, &before);
    g_sigchld_count = 0;
    {
        // A child of ours that exits while the record is made: a loop that reaps on SIGCHLD
        // must still hear of it (libutempter sets SIGCHLD to SIG_DFL while its helper runs).
        const pid_t child = ::fork();
        if (child == 0) ::_exit(0);
        caretz::Pty pty = caretz::Pty::open({24, 80});
        caretz::UtmpRecord record(pty.master(), "caretz-test");
        record.registered();
        ::waitpid(child, nullptr, 0);
        CHECK(g_sigchld_count >= 1);
        struct sigaction during {};
        ::sigaction(SIGCHLD, nullptr, &during);
        CHECK(during.sa_handler == count_sigchld);
    }
    ::sigaction(SIGCHLD, &before, nullptr);
}

TEST_CASE("a PTY stands in utmp while its record lives, also past a killed owner", "[utmp]") {
    if (!utmp_works()) {
        WARN("no utmp to record in here (" _PATH_UTMP "), so nothing to see in it");
        return;
    }
    caretz::Pty pty = caretz::Pty::open({24, 80});
    const std::string line = line_of(pty);
    SECTION("until the record goes") {
        {
            caretz::UtmpRecord record(pty.master(), "caretz-test");
            REQUIRE(record.registered());
            CHECK(caretz::utmp_lists(line));
        }
        CHECK_FALSE(caretz::utmp_lists(line));
    }
    for (int sig : {SIGTERM, SIGHUP, SIGKILL}) {
        DYNAMIC_SECTION("until its owner dies from signal " << sig) {
            int ready[2];
            REQUIRE(::pipe(ready) == 0);
            const pid_t owner = ::fork();
            if (owner == 0) {
                caretz::UtmpRecord record(pty.master(), "caretz-test");
                ssize_t ignored = ::write(ready[1], record.registered() ? "1" : "0", 1);
                (void)ignored;
                ::pause();
                ::_exit(0);
            }
            ::close(ready[1]);
            char made = '0';
            REQUIRE(::read(ready[0], &made, 1) == 1);
            ::close(ready[0]);
            CHECK(made == '1');
            CHECK(caretz::utmp_lists(line));
            ::kill(owner, sig);
            ::waitpid(owner, nullptr, 0);
            // The keeper removes the record once the owner's end of its pipe is closed.
            bool listed = true;
            for (int i = 0; i < 50 && listed; ++i) {
                listed = caretz::utmp_lists(line);
                if (listed) ::usleep(20000);
            }
            CHECK_FALSE(listed);
        }
    }
}
