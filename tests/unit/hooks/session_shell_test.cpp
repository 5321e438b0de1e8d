// Starts real bash, zsh and fish session shells through shell_launch on a PTY and drives them
// the way the supervisor does: start the shell with its first command's file in its
// environment, then, for each next command, wait for the end of the prompt, write a command
// file and type `__caretz_run FILE`; the marks are read back through MarkParser.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "hooks/shell_launch.h"
#include "pty/mark_parser.h"
#include "pty/pty.h"
#include "tests/unit/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using caretz::TempDir;
using namespace std::chrono_literals;

std::string random_nonce() {
    std::random_device device;
    std::string nonce;
    const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; ++i) nonce.push_back(digits[device() % 16]);
    return nonce;
}

void write_file(const fs::path& path, const std::string& content) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << content;
}

std::string shell_path(const std::string& name) {
    for (const char* dir : {"/usr/bin/", "/bin/", "/usr/local/bin/"}) {
        std::string path = dir + name;
        if (::access(path.c_str(), X_OK) == 0) return path;
    }
    return {};
}

struct CommandResult {
    std::string output;  // everything between the C and D marks
    int status = -1;
    // The directory at the end mark: the last OSC 7 so far, as Caretz keeps it (the hooks
    // report it when it changed, before the end mark).
    std::string cwd;
    int starts = 0;  // C marks seen
};

// How the first command is started: reading the terminal, or nothing (</dev/null), and whether
// Ctrl-C is pressed once it has printed something.
struct FirstCommand {
    bool reads_terminal = true;
    bool interrupted = false;
};

// A session shell on a PTY, with the marks it printed so far.
class SessionShell : public caretz::MarkParser::Handler {
public:
    SessionShell(const std::string& shell, const TempDir& home,
                 const std::optional<std::string>& user_zdotdir = std::nullopt)
        : nonce_(random_nonce()),
          parser_(nonce_),
          home_(home.path()),
          pty_(caretz::Pty::open({24, 200})),
          launch_(caretz::shell_launch(shell, (home_ / ".caretz-hooks").string(), home_.string(),
                                       user_zdotdir)) {
        for (const auto& [path, content] : launch_.files) write_file(path, content);
    }

    ~SessionShell() override {
        if (child_ <= 0) return;
        ::kill(child_, SIGKILL);
        ::waitpid(child_, nullptr, 0);
    }

    // Ends the shell as a user would, so that it saves whatever it saves on exit.
    void exit() {
        type("exit\r");
        auto deadline = std::chrono::steady_clock::now() + 5s;
        char buf[4096];
        for (;;) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) FAIL("the shell did not exit; its output:\n" << seen_);
            pollfd p{pty_.master(), POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
            ssize_t n = ::read(pty_.master(), buf, sizeof buf);
            if (n <= 0) break;
            seen_.append(buf, static_cast<size_t>(n));
        }
        ::waitpid(child_, nullptr, 0);
        child_ = -1;
    }

    const std::string& nonce() const { return nonce_; }

    // Starts the shell with its first command, as the supervisor does, and waits for the prompt
    // after it.
    CommandResult start(const std::string& command_text, FirstCommand how = {}) {
        std::map<std::string, std::string> env = {
            {"PATH", "/usr/local/bin:/usr/bin:/bin"},
            {"TERM", "xterm-256color"},
            {"LANG", "C.UTF-8"},
            {"USER", "caretz-test"},
            {"CARETZ_FIRST_COMMAND", command_file(command_text)},
            {"CARETZ_FIRST_COMMAND_INPUT", how.reads_terminal ? "terminal" : "none"}};
        spawn(launch_.argv, caretz::environment_for(launch_, env));
        return finish(how.interrupted);
    }

    CommandResult run(const std::string& command_text) {
        type("__caretz_run " + command_file(command_text) + "\r");
        return finish(false);
    }

    // Runs the command and presses Ctrl-C once it has printed something.
    CommandResult run_and_interrupt(const std::string& command_text) {
        type("__caretz_run " + command_file(command_text) + "\r");
        return finish(true);
    }

    void on_output(std::string_view bytes) override {
        if (in_command_) result_.output.append(bytes);
    }
    void on_prompt_end() override {
        if (done_) ++prompt_ends_after_done_;
    }
    void on_command_start() override {
        in_command_ = true;
        ++result_.starts;
    }
    void on_command_done(int status) override {
        in_command_ = false;
        done_ = true;
        result_.status = status;
        result_.cwd = cwd_;
    }
    void on_cwd(std::string path) override { cwd_ = std::move(path); }

private:
    // Writes the next command's file and makes ready to follow it; returns the file's path.
    std::string command_file(const std::string& command_text) {
        fs::path file = home_ / (".caretz-command-" + std::to_string(++commands_));
        write_file(file, command_text);
        result_ = CommandResult{};
        done_ = false;
        prompt_ends_after_done_ = 0;
        return file.string();
    }

    // Waits for the command's end and the prompt after it, pressing Ctrl-C first if asked to,
    // once the command has printed something.
    CommandResult finish(bool interrupt) {
        if (interrupt) {
            wait_for([this] { return !result_.output.empty(); });
            type("\x03");
        }
        wait_for([this] { return prompt_ends_after_done_ > 0; });
        return result_;
    }

    void spawn(const std::vector<std::string>& argv,
               const std::map<std::string, std::string>& env) {
        std::vector<std::string> env_strings;
        for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
        std::vector<char*> argv_c, env_c;
        for (const auto& arg : argv) argv_c.push_back(const_cast<char*>(arg.c_str()));
        for (const auto& var : env_strings) env_c.push_back(const_cast<char*>(var.c_str()));
        argv_c.push_back(nullptr);
        env_c.push_back(nullptr);
        std::string home = home_.string();
        // The nonce on its descriptor, as the supervisor hands it over.
        int nonce_pipe[2];
        REQUIRE(::pipe2(nonce_pipe, O_CLOEXEC) == 0);
        const std::string nonce_line = nonce_ + "\n";
        REQUIRE(::write(nonce_pipe[1], nonce_line.data(), nonce_line.size()) ==
                static_cast<ssize_t>(nonce_line.size()));
        ::close(nonce_pipe[1]);
        child_ = ::fork();
        if (child_ < 0) throw std::runtime_error("fork failed");
        if (child_ == 0) {
            if (!caretz::attach_controlling_terminal(pty_.slave()) || ::chdir(home.c_str()) != 0 ||
                ::dup2(nonce_pipe[0], caretz::kNonceFd) < 0) {
                ::_exit(126);
            }
            ::execve(argv_c[0], argv_c.data(), env_c.data());
            ::_exit(127);
        }
        ::close(nonce_pipe[0]);
        pty_.close_slave();
    }

    void type(const std::string& line) {
        REQUIRE(::write(pty_.master(), line.data(), line.size()) ==
                static_cast<ssize_t>(line.size()));
    }

    template <typename Done>
    void wait_for(Done done) {
        auto deadline = std::chrono::steady_clock::now() + 5s;
        char buf[4096];
        while (!done()) {
            auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                deadline - std::chrono::steady_clock::now());
            if (left.count() <= 0) FAIL("timed out waiting for the shell; its output:\n" << seen_);
            pollfd p{pty_.master(), POLLIN, 0};
            if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
            ssize_t n = ::read(pty_.master(), buf, sizeof buf);
            if (n <= 0) FAIL("the shell went away; its output:\n" << seen_);
            seen_.append(buf, static_cast<size_t>(n));
            parser_.feed(std::string_view(buf, static_cast<size_t>(n)), *this);
        }
    }

    std::string nonce_;
    caretz::MarkParser parser_;
    fs::path home_;
    caretz::Pty pty_;
    caretz::ShellLaunch launch_;
    pid_t child_ = -1;
    std::string seen_;
    std::string cwd_;  // the last OSC 7
    int commands_ = 0;
    int prompt_ends_after_done_ = 0;
    bool in_command_ = false;
    bool done_ = false;
    CommandResult result_;
};

// What every shell must do; `subshell_exit_3` is the shell's way to run `exit 3` in a child.
void check_session_behaviour(SessionShell& shell, const TempDir& home,
                             const std::string& subshell_exit_3) {
    CommandResult hello = shell.start("echo hello");
    CHECK(hello.output == "hello\r\n");
    CHECK(hello.status == 0);
    CHECK(hello.starts == 1);
    CHECK(hello.cwd == home.path().string());

    CHECK(shell.run("false").status == 1);
    CHECK(shell.run(subshell_exit_3).status == 3);
    CHECK(shell.run("caretz_no_such_command_here").status == 127);

    fs::create_directories(home.path() / "sub dir;é");
    CommandResult cd = shell.run("cd 'sub dir;é'");
    CHECK(cd.status == 0);
    CHECK(cd.cwd == (home.path() / "sub dir;é").string());
    CommandResult pwd = shell.run("pwd");
    CHECK(pwd.output == (home.path() / "sub dir;é").string() + "\r\n");
    CHECK(pwd.cwd == cd.cwd);
    CHECK(shell.run("cd ..").cwd == home.path().string());

    CHECK(shell.run("export CARETZ_TEST_X=1").status == 0);
    CHECK(shell.run("echo \"x=$CARETZ_TEST_X\"; sh -c 'echo child=$CARETZ_TEST_X'").output ==
          "x=1\r\nchild=1\r\n");

    CommandResult forged = shell.run(
        "printf '\\033]133;D;0\\007\\033]133;D;0;caretz=wrong\\007'; sleep 0.1; echo after");
    CHECK(forged.status == 0);
    CHECK(forged.output ==
          "\x1b]133;D;0\x07\x1b]133;D;0;caretz=wrong\x07"
          "after\r\n");

    // The output comes from the process that then sleeps, so Ctrl-C cannot arrive while the
    // shell is still starting it (a window in which bash and zsh lose the signal).
    CommandResult interrupted =
        shell.run_and_interrupt("sh -c 'echo started; exec sleep 5'; echo not reached");
    CHECK(interrupted.status == 130);
    CHECK(interrupted.output.find("not reached") == std::string::npos);
    CHECK(shell.run("echo still here").output == "still here\r\n");

    // The guard that keeps the shell's memory closed is not passed on to its commands, nor is
    // the descriptor the nonce came on.
    CHECK(shell.run("printenv LD_PRELOAD || echo none").output == "none\r\n");
    CHECK(shell.run("sh -c 'cat <&3' 2>/dev/null && echo open || echo closed").output ==
          "closed\r\n");

    CommandResult count = shell.run("env | grep -c CARETZ_NONCE");
    CHECK(count.output == "0\r\n");
    CommandResult env = shell.run("env");
    CHECK(env.status == 0);
    CHECK(env.output.find("PATH=") != std::string::npos);
    CHECK(env.output.find(shell.nonce()) == std::string::npos);

    CHECK(fs::exists(home.path() / "prompt-hook-ran"));
}

}  // namespace

TEST_CASE("bash session shell", "[hooks][bash]") {
    std::string bash = shell_path("bash");
    REQUIRE(!bash.empty());
    TempDir home;
    write_file(home.path() / ".bashrc",
               "set -u\n"
               "HISTFILE=\"$HOME/user_history\"\n"
               "PROMPT_COMMAND=('status_seen=$?' 'touch \"$HOME/prompt-hook-ran\"' 'history -a')\n"
               "PS1='user\\$ '\n");
    SessionShell shell(bash, home);
    check_session_behaviour(shell, home, "(exit 3)");

    // The user's prompt commands see the command's status.
    shell.run("(exit 4)");
    CHECK(shell.run("echo $status_seen").output == "4\r\n");

    // Declare acts at the top level.
    shell.run("declare -A table=([key]=value)");
    CHECK(shell.run("echo \"${table[key]}\"").output == "value\r\n");

    // A multi-line command with a heredoc.
    CommandResult heredoc = shell.run("cat <<'EOF'\nline one\n  $line two\nEOF\necho done\n");
    CHECK(heredoc.output == "line one\r\n  $line two\r\ndone\r\n");
    CHECK(heredoc.status == 0);

    // Nothing reaches the user's history file.
    shell.exit();
    CHECK(!fs::exists(home.path() / "user_history"));
}

TEST_CASE("bash session shell with a string PROMPT_COMMAND", "[hooks][bash]") {
    std::string bash = shell_path("bash");
    REQUIRE(!bash.empty());
    TempDir home;
    write_file(home.path() / ".bashrc",
               "set -u\nPROMPT_COMMAND='touch \"$HOME/prompt-hook-ran\" # a comment'\n");
    SessionShell shell(bash, home);
    CHECK(shell.start("echo hi").output == "hi\r\n");
    CHECK(shell.run("false").status == 1);
    CHECK(fs::exists(home.path() / "prompt-hook-ran"));
}

TEST_CASE("zsh session shell", "[hooks][zsh]") {
    std::string zsh = shell_path("zsh");
    REQUIRE(!zsh.empty());
    TempDir home;
    write_file(home.path() / ".zshenv", "export FROM_USER_ZSHENV=yes\n");
    write_file(home.path() / ".zshrc",
               "setopt nounset\n"
               "HISTFILE=\"$HOME/user_history\" HISTSIZE=100 SAVEHIST=100\n"
               "setopt INC_APPEND_HISTORY\n"
               "precmd() { touch \"$HOME/prompt-hook-ran\"; print 'user precmd output' }\n"
               "second_hook() { status_seen=$? }\n"
               "precmd_functions+=(second_hook)\n"
               "PS1='user%# '\n");
    SessionShell shell(zsh, home);
    check_session_behaviour(shell, home, "(exit 3)");

    // The user's .zshenv ran and ZDOTDIR is as the user had it.
    CHECK(shell.run("echo $FROM_USER_ZSHENV ${ZDOTDIR-unset}").output == "yes unset\r\n");

    // The user's precmd hooks see the command's status.
    shell.run("(exit 4)");
    CHECK(shell.run("echo $status_seen").output == "4\r\n");

    // Typeset acts at the top level.
    shell.run("typeset -A table; table[key]=value");
    CHECK(shell.run("echo \"${table[key]}\"").output == "value\r\n");

    // A multi-line command with a heredoc.
    CommandResult heredoc = shell.run("cat <<'EOF'\nline one\n  $line two\nEOF\necho done\n");
    CHECK(heredoc.output == "line one\r\n  $line two\r\ndone\r\n");

    // Nothing reaches the user's history file.
    shell.exit();
    CHECK(!fs::exists(home.path() / "user_history"));
}

TEST_CASE("zsh session shell with the user's own ZDOTDIR", "[hooks][zsh]") {
    std::string zsh = shell_path("zsh");
    REQUIRE(!zsh.empty());
    TempDir home;
    fs::path zdotdir = home.path() / "zdot";
    write_file(zdotdir / ".zshenv", "FROM_ZDOTDIR_ZSHENV=yes\n");
    write_file(zdotdir / ".zshrc", "FROM_ZDOTDIR_ZSHRC=yes\n");
    SessionShell shell(zsh, home, zdotdir.string());
    CHECK(shell.start("echo $FROM_ZDOTDIR_ZSHENV $FROM_ZDOTDIR_ZSHRC $ZDOTDIR").output ==
          "yes yes " + zdotdir.string() + "\r\n");
    CHECK(shell.run("env | grep -c '^ZDOTDIR=" + zdotdir.string() + "$'").output == "1\r\n");
}

TEST_CASE("fish session shell", "[hooks][fish]") {
    std::string fish = shell_path("fish");
    REQUIRE(!fish.empty());
    TempDir home;
    write_file(home.path() / ".config/fish/config.fish",
               "set -g fish_greeting\n"
               "function fish_prompt; echo -n 'user> '; end\n"
               "function user_prompt_hook --on-event fish_prompt\n"
               "    touch $HOME/prompt-hook-ran\n"
               "end\n"
               "function user_postexec --on-event fish_postexec\n"
               "    set -g status_seen $status\n"
               "end\n");
    SessionShell shell(fish, home);
    check_session_behaviour(shell, home, "sh -c 'exit 3'");

    // The user's postexec handlers see the command's status.
    shell.run("sh -c 'exit 4'");
    CHECK(shell.run("echo $status_seen").output == "4\r\n");

    // A plain set acts at the top level.
    shell.run("set answer 42");
    CHECK(shell.run("echo $answer").output == "42\r\n");

    // A multi-line command.
    CommandResult block =
        shell.run("begin\n  echo 'line one'\n  echo '  $line two'\nend\necho done\n");
    CHECK(block.output == "line one\r\n  $line two\r\ndone\r\n");

    // Nothing reaches the user's history file.
    shell.exit();
    std::ifstream history(home.path() / ".local/share/fish/fish_history");
    std::string saved((std::istreambuf_iterator<char>(history)), std::istreambuf_iterator<char>());
    CHECK(saved.find("__caretz_run") == std::string::npos);
}

// The first command runs as if typed at the first prompt, though no prompt comes before it:
// after the user's prompt code, at the top level, with the job control a typed one has (bash
// and zsh: a foreground job of its own; fish runs what __caretz_run starts in its own process
// group), and with the end of input at once when nobody types into it.
TEST_CASE("a session shell's first command runs as a typed one would", "[hooks]") {
    struct Case {
        std::string shell;
        std::string rc_path;
        std::string rc;             // a prompt hook that logs each run to ~/prompt-log
        std::string declare;        // makes `table` or `answer` hold "value" at the top level
        std::string show_declared;  // prints it
        bool own_job;               // a typed command is a foreground job of its own
    };
    const std::vector<Case> cases = {
        {"bash", ".bashrc", "PROMPT_COMMAND='echo ran >> ~/prompt-log'\n",
         "declare -A table=([key]=value)", "echo \"${table[key]}\"", true},
        {"zsh", ".zshrc", "precmd() { echo ran >> ~/prompt-log }\n",
         "typeset -A table; table[key]=value", "echo \"${table[key]}\"", true},
        {"fish", ".config/fish/config.fish",
         "set -g fish_greeting\n"
         "function log_prompt --on-event fish_prompt; echo ran >> ~/prompt-log; end\n",
         "set answer value", "echo $answer", false},
    };
    // The command's own process group is the terminal's foreground one, not the shell's.
    const std::string own_job =
        "sh -c 'own=$(ps -o pgid= -p $$); shell=$(ps -o pgid= -p $PPID); "
        "fg=$(ps -o tpgid= -p $$); [ $own = $fg ] && [ $own != $shell ] && echo own-job'";
    for (const auto& c : cases) {
        INFO(c.shell);
        const std::string path = shell_path(c.shell);
        REQUIRE(!path.empty());
        {
            TempDir home;
            write_file(home.path() / c.rc_path, c.rc);
            SessionShell shell(path, home);
            // The prompt code ran once before it (direnv loads a folder's settings there)...
            CHECK(shell.start("cat ~/prompt-log").output == "ran\r\n");
            // ... and once after it, at the prompt that followed.
            CHECK(shell.run("cat ~/prompt-log").output == "ran\r\nran\r\n");
        }
        {
            TempDir home;
            SessionShell shell(path, home);
            shell.start(c.declare);
            CHECK(shell.run(c.show_declared).output == "value\r\n");
        }
        {
            TempDir home;
            SessionShell shell(path, home);
            const std::string expected = c.own_job ? "own-job\r\n" : "";
            CHECK(shell.start(own_job).output == expected);
            CHECK(shell.run(own_job).output == expected);
        }
        {
            TempDir home;
            SessionShell shell(path, home);
            CommandResult eof =
                shell.start("sh -c 'cat; echo read-all'", {.reads_terminal = false});
            CHECK(eof.output == "read-all\r\n");
            CHECK(eof.status == 0);
        }
        {
            TempDir home;
            SessionShell shell(path, home);
            CommandResult interrupted = shell.start(
                "sh -c 'echo started; exec sleep 5'; echo not reached", {.interrupted = true});
            CHECK(interrupted.status == 130);
            CHECK(interrupted.output.find("not reached") == std::string::npos);
            CHECK(shell.run("echo still here").output == "still here\r\n");
        }
    }
}
