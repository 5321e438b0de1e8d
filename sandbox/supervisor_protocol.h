#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "pty/unique_fd.h"
#include "sandbox/sandbox.h"

namespace caretz {

// Frames between Caretz and the session supervisor inside the sandbox, over one stream
// socket: a type byte, a 32-bit little-endian length, then the payload.
enum class Frame : char {
    output = 'O',         // supervisor -> Caretz: bytes the session shell's PTY produced
    shell_exited = 'X',   // supervisor -> Caretz: the shell ended; payload is its exit status
    shell_started = 'H',  // supervisor -> Caretz: a shell was started (it now reads the rc)
    input = 'I',          // Caretz -> supervisor: bytes typed into the session shell's PTY
    run = 'R',            // Caretz -> supervisor: payload "T" or "N" (stdin terminal or
                          //   /dev/null) followed by the command text
    resize = 'W',         // Caretz -> supervisor: "ROWSxCOLS"
    setup = 'U',          // Caretz -> supervisor, first: "NONCE\0SHELL\0HOME\0OUTPUT", OUTPUT
                          //   "exact" or "terminal": what every shell of the session starts with
    start_shell = 'S',    // Caretz -> supervisor: "CWD\0" then a run payload: start a fresh
                          //   shell in CWD that runs this command as its first, on the PTY
                          //   whose master and slave come with the frame (SCM_RIGHTS): Caretz
                          //   opens it on the host, so that it can stand in utmp
    job_start = 'B',      // Caretz -> supervisor: "ID\0CWD\0COMMAND": run `$SHELL -c COMMAND`
                          //   in the background, output to a file in the private /tmp
    job_output = 'P',     // Caretz -> supervisor: "ID": the job's state and output
    job_status = 'Q',     // Caretz -> supervisor: "ID": the job's state only
    job_kill = 'K',       // Caretz -> supervisor: "ID": end the job's process group
    job_reply = 'J',      // supervisor -> Caretz: the answer to the job request before it
};

// Answers to job requests (payloads of Frame::job_reply).
inline constexpr std::string_view kJobOk = "ok";
inline constexpr std::string_view kJobUnknown = "unknown";
inline constexpr std::string_view kJobNotRunning = "not running";

// A job report as a job_reply payload, and back; decoding anything else (kJobUnknown, a
// malformed payload) gives nullopt.
std::string encode_job_report(const JobReport& report);
std::optional<JobReport> decode_job_report(std::string_view payload);

// The parts of a payload separated by NUL bytes.
std::vector<std::string> split_payload(std::string_view payload);

// Writes one frame; false when the peer is gone.
bool send_frame(int fd, Frame type, std::string_view payload);
// The same over a Unix socket, with `fds` passed along (SCM_RIGHTS) for the peer to take with
// FrameReader::read_with_fds_from; at most kMaxPassedFds (pty/fd_io.h) of them.
bool send_frame(int fd, Frame type, std::string_view payload, const std::vector<int>& fds);

// Splits a byte stream into frames.
class FrameReader {
public:
    struct Message {
        Frame type;
        std::string payload;
    };

    // Reads what is available from `fd` (one read call). False on EOF or error. Descriptors
    // the peer passed along are closed unseen.
    bool read_from(int fd);
    // The same for the one side that takes descriptors: they wait, in order, for take_fds().
    bool read_with_fds_from(int fd);
    std::vector<UniqueFd> take_fds() { return std::exchange(fds_, {}); }
    // The next complete frame, if one has arrived.
    std::optional<Message> next();

private:
    bool append(ssize_t n, const char* buf);

    std::string buffer_;
    size_t consumed_ = 0;
    std::vector<UniqueFd> fds_;
};

}  // namespace caretz
