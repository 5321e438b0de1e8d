#include "escalation/shell_command.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using caretz::named_paths;
using caretz::runs_sudo;
using caretz::scan_shell;
using caretz::uses_session_bus;

namespace {

struct SudoCase {
    const char* command;
    bool runs;
};

}  // namespace

TEST_CASE("runs_sudo finds sudo where the shell would run it", "[shell_command]") {
    const std::vector<SudoCase> cases = {
        {"sudo -n true", true},
        {"sudo -n true; echo \"exit=$?\"", true},
        {"echo start; sudo true", true},
        {"make && sudo make install", true},
        {"false || sudo true", true},
        {"echo x | sudo tee /etc/x", true},
        {"cmd |& sudo tee log", true},
        {"sleep 1 & sudo true", true},
        {"(sudo true)", true},
        {"{ sudo true; }", true},
        {"x=$(sudo cat /etc/shadow)", true},
        {"echo \"$(sudo id -u)\"", true},
        {"echo `sudo id -u`", true},
        {"diff <(sudo cat /etc/a) /etc/b", true},
        {"echo ok\nsudo true", true},
        {"! sudo true", true},
        {"if sudo true; then echo y; fi", true},
        {"if true; then sudo true; else sudo false; fi", true},
        {"while true; do sudo true; done", true},
        {"FOO=1 sudo true", true},
        {"A=1 B=\"two words\" sudo true", true},
        {"env sudo true", true},
        {"env -i PATH=/usr/bin sudo true", true},
        {"env -u HOME -C /tmp sudo true", true},
        {"/usr/bin/env sudo true", true},
        {"time sudo true", true},
        {"time -p sudo true", true},
        {"nice sudo true", true},
        {"nice -n 5 sudo true", true},
        {"nice -n5 sudo true", true},
        {"nohup sudo true", true},
        {"exec sudo true", true},
        {"command sudo true", true},
        {"command -p sudo true", true},
        {"xargs sudo rm", true},
        {"find . | xargs -0 -n 1 -I{} sudo rm {}", true},
        {"xargs --max-procs 4 sudo rm", true},
        {"timeout 5 sudo true", true},
        {"timeout -s KILL -k 2 5 sudo true", true},
        {"timeout --signal=KILL 5s sudo true", true},
        {"stdbuf -oL sudo journalctl -f", true},
        {"stdbuf -o L sudo true", true},
        {"nohup nice -n 5 timeout 10 sudo true", true},
        {"/usr/bin/sudo true", true},
        {"./sudo true", true},
        {"\"sudo\" true", true},
        {"s\\udo true", true},
        {"bash -c 'sudo true'", true},
        {"sh -ec \"sudo true\"", true},
        {"bash -o pipefail -c 'echo | sudo tee x'", true},
        {"zsh -c 'sudo true'", true},
        {"fish --command='sudo true'", true},
        {"bash -c 'bash -c \"sudo true\"'", true},
        {"2>/dev/null sudo true", true},
        {"sudo true 2>&1 | head", true},
        {"cat <<EOF | bash\nsudo true\nEOF", true},
        {"echo sudo", false},
        {"echo \"sudo true\"", false},
        {"echo 'sudo true; sudo false'", false},
        {"grep -r \"sudo: no new privileges\" logs/", false},
        {"grep -r \"no new privileges\" logs/", false},
        {"man sudo", false},
        {"which sudo", false},
        {"type sudo", false},
        {"command -v sudo", false},
        {"command -V sudo", false},
        {"apt-get install sudo", false},
        {"ls /etc/sudoers.d", false},
        {"sudoedit /etc/hosts", false},
        {"visudo -c", false},
        {"echo hi # sudo true", false},
        {"echo hi > sudo", false},
        {"cat < sudo", false},
        {"ssh host sudo reboot", false},
        {"bash -c 'echo sudo'", false},
        {"bash script.sh sudo", false},
        {"echo $((1 + 2))", false},
        {"SUDO=sudo; echo $SUDO", false},
        {"echo ${SUDO:-sudo}", false},
        {"echo $'sudo\\'s'", false},
        {"", false},
    };
    for (const auto& c : cases) {
        INFO("command: " << c.command);
        CHECK(runs_sudo(c.command) == c.runs);
    }
}

TEST_CASE("scan_shell splits simple commands and drops redirections", "[shell_command]") {
    const auto scan = scan_shell("FOO='a b' cmd \"x y\" 2>/dev/null >>log; other $(inner) | last");
    using Words = std::vector<std::string>;
    REQUIRE(scan.commands.size() == 3);
    CHECK(scan.commands[0] == Words{"FOO=a b", "cmd", "x y"});
    CHECK(scan.commands[1] == Words{"other", ""});
    CHECK(scan.commands[2] == Words{"last"});
    CHECK(scan.substitutions == std::vector<std::string>{"inner"});
}

TEST_CASE("scan_shell survives unterminated quotes and substitutions", "[shell_command]") {
    CHECK_NOTHROW(scan_shell("echo 'unterminated"));
    CHECK_NOTHROW(scan_shell("echo \"unterminated $(sudo"));
    CHECK_NOTHROW(scan_shell("echo `unterminated"));
    CHECK_NOTHROW(scan_shell("echo ${unterminated"));
    CHECK_NOTHROW(scan_shell("trailing backslash \\"));
    CHECK(runs_sudo("echo \"$(sudo true"));
}

TEST_CASE("directory_arguments finds where -C and cd point programs", "[shell_command]") {
    using caretz::directory_arguments;
    using caretz::DirectoryArgument;
    const auto dirs = [](const char* command) {
        std::vector<std::string> out;
        for (const DirectoryArgument& d : directory_arguments(command))
            out.push_back((d.changes_cwd ? "cd " : "in ") + d.dir);
        return out;
    };
    using Dirs = std::vector<std::string>;
    CHECK(dirs("tar -xf bundle.tar -C ~/outside") == Dirs{"in ~/outside"});
    CHECK(dirs("tar -xf b.tar -C'/opt/my dir' && make -Cbuild install") ==
          Dirs{"in /opt/my dir", "in build"});
    CHECK(dirs("make --directory=/srv/app; tar --directory /srv x") ==
          Dirs{"in /srv/app", "in /srv"});
    CHECK(dirs("cd /etc && git -C repo pull") == Dirs{"cd /etc", "in repo"});
    CHECK(dirs("if cd -P /srv; then pushd sub; touch x; fi") == Dirs{"cd /srv", "cd sub", "in "});
    CHECK(dirs("LANG=C cd /x") == Dirs{"cd /x"});
    CHECK(dirs("tar -C") == Dirs{"in "});
    CHECK(dirs("ls -la | grep x") == Dirs{"in ", "in "});
}

TEST_CASE("uses_session_bus knows the programs that talk to the user's bus", "[shell_command]") {
    for (const char* command :
         {"systemctl --user restart x; echo done", "busctl --user list", "journalctl --user -n 1",
          "gdbus call --session --dest a", "dbus-send --print-reply --dest=a / a.b",
          "gsettings set a b c", "brew services restart postgresql", "echo $(loginctl --user)"})
        CHECK(uses_session_bus(command));
    for (const char* command : {"systemctl restart x", "dbus-send --system --dest=a / a.b",
                                "gdbus call --system --dest a", "echo --user", "brew install x"})
        CHECK_FALSE(uses_session_bus(command));
}

TEST_CASE("named_paths finds the absolute paths a command names anywhere", "[shell_command]") {
    CHECK(named_paths("perl -e 'open(my $f, \">\", \"/home/u/x\") or die \"$!\"'") ==
          std::vector<std::string>{"/home/u/x"});
    CHECK(named_paths("curl -sS -o ~/page file:///etc/hostname; cat ~/page $HOME/a") ==
          std::vector<std::string>{"~/page", "$HOME/a"});
    CHECK(named_paths("make -C build all").empty());
}
