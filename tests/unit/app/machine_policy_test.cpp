#include "app/machine_policy.h"

#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "tests/unit/temp_dir.h"

using namespace caretz;
using Catch::Matchers::Contains;
using std::chrono::seconds;

namespace {

constexpr const char* kPolicy = "/etc/caretz/policy.json";
constexpr const char* kMachine = "/etc/caretz/config.json";
constexpr const char* kUser = "/home/u/.config/caretz/config.json";

// The settings of a run with these files, profile and flags under `policy`, as main builds them.
Settings run_with(const MachinePolicy& policy, const std::string& machine_json,
                  const std::string& user_json, const std::optional<std::string>& profile = {},
                  const ConfigLayer& flags = {}) {
    const auto layers = layers_in_force(
        {parse_config(machine_json, kMachine), parse_config(user_json, kUser)}, profile, flags);
    check_within_policy(policy, layers, "/home/u", "/home/u/work");
    Settings settings = merge_settings(layers);
    apply_policy(policy, settings);
    return settings;
}

// What stops such a run, or "(no error)".
std::string refusal(const MachinePolicy& policy, const std::string& machine_json,
                    const std::string& user_json, const std::optional<std::string>& profile = {},
                    const ConfigLayer& flags = {}) {
    try {
        run_with(policy, machine_json, user_json, profile, flags);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "(no error)";
}

std::string policy_error(const std::string& text) {
    try {
        parse_machine_policy(text, kPolicy);
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "(no error)";
}

const MachinePolicy& strict_policy() {
    static const MachinePolicy policy = parse_machine_policy(R"({
        "ask_sandbox_off": false,
        "allow_docker": false,
        "permission_timeout": "5m",
        "audit": {"syslog": true},
        "sandbox": {
            "hidden": ["/srv/secrets", "~/.team-token"],
            "denied_domains": ["*.internal.example.com"],
            "allowed_domains": ["*.debian.org", "pypi.org:443", "internal.example.com"],
            "open_host_run": false
        }
    })",
                                                             kPolicy);
    return policy;
}

}  // namespace

TEST_CASE("a policy sets each key it may hold") {
    const MachinePolicy& p = strict_policy();
    CHECK(p.path == kPolicy);
    CHECK(p.forbids_ask_sandbox_off);
    CHECK(p.forbids_docker);
    CHECK(p.requires_syslog);
    CHECK(p.max_permission_timeout == seconds(300));
    CHECK(p.hidden == std::vector<std::string>{"/srv/secrets", "~/.team-token"});
    CHECK(p.denied_domains == std::vector<std::string>{"*.internal.example.com"});
    REQUIRE(p.allowed_domains);
    CHECK(p.allowed_domains->size() == 3);

    const MachinePolicy empty = parse_machine_policy("{}", kPolicy);
    CHECK_FALSE(empty.forbids_ask_sandbox_off);
    CHECK_FALSE(empty.allowed_domains);
}

TEST_CASE("a policy that is malformed or says what it cannot enforce stops Caretz") {
    CHECK_THAT(policy_error("{\"ask_sandbox_off\": false,"),
               Contains(kPolicy) && Contains("not valid JSON"));
    CHECK_THAT(policy_error("[]"), Contains(kPolicy) && Contains("must be an object"));
    // Keys a policy does not know, including config keys that only loosen.
    for (const char* text : {R"({"ask_sandbox_of": false})", R"({"sandbox": {"writable": ["/x"]}})",
                             R"({"sandbox": {"visible": []}})", R"({"sandbox": {"env": {}}})",
                             R"({"sandbox_off": {"always_allow": ["ls"]}})", R"({"profiles": {}})",
                             R"({"audit": {"file": "x"}})"}) {
        INFO(text);
        CHECK_THAT(policy_error(text), Contains(kPolicy) && Contains("cannot be set here") &&
                                           Contains("sandbox.allowed_domains"));
    }
    CHECK_THAT(policy_error("{\n\"sandbox\": {\n\"writable\": []}}"),
               Contains(std::string(kPolicy) + ":3") && Contains("\"sandbox.writable\""));
    // Values that would loosen rather than bind.
    CHECK_THAT(policy_error(R"({"ask_sandbox_off": true})"),
               Contains("\"ask_sandbox_off\"") && Contains("only be false"));
    CHECK_THAT(policy_error(R"({"allow_docker": true})"),
               Contains("\"allow_docker\"") && Contains("only be false"));
    CHECK_THAT(policy_error(R"({"audit": {"syslog": false}})"),
               Contains("\"audit.syslog\"") && Contains("only be true"));
    // Wrong types and entries.
    CHECK_THAT(policy_error(R"({"permission_timeout": "soon"})"),
               Contains("\"permission_timeout\"") && Contains("duration"));
    CHECK_THAT(policy_error(R"({"sandbox": {"hidden": ["srv"]}})"),
               Contains("\"sandbox.hidden\"") && Contains("\"srv\""));
    CHECK_THAT(policy_error(R"({"sandbox": {"allowed_domains": ["https://x.org/"]}})"),
               Contains("\"sandbox.allowed_domains\"") && Contains("https://x.org/"));
}

TEST_CASE("each key the policy forces holds when nothing else sets it") {
    const Settings s = run_with(strict_policy(), "{}", "{}");
    CHECK_FALSE(s.ask_sandbox_off);
    CHECK_FALSE(s.sandbox.allow_docker);
    CHECK(s.audit_syslog);
    CHECK(s.permission_timeout == seconds(300));
    CHECK(s.sandbox.hidden == std::vector<std::string>{"/srv/secrets", "~/.team-token"});
    CHECK(s.sandbox.denied_domains == std::vector<std::string>{"*.internal.example.com"});
    REQUIRE(s.sandbox.domain_bound);
    CHECK(*s.sandbox.domain_bound == *strict_policy().allowed_domains);
    CHECK(s.sandbox.allowed_domains.empty());  // a bound, not a grant
}

TEST_CASE("within the policy, config, profile and flags choose as before") {
    ConfigLayer flags;
    flags.permission_timeout = seconds(90);
    const Settings s = run_with(strict_policy(), R"({"permission_timeout": "4m",
        "sandbox": {"hidden": ["/opt/a"], "denied_domains": ["evil.org"]}})",
                                R"({"audit": {"syslog": true}, "ask_sandbox_off": false,
        "sandbox": {"allowed_domains": ["deb.debian.org", "*.security.debian.org",
                    "pypi.org:443", "internal.example.com"],
                    "writable": ["/srv"]},
        "profiles": {"quick": {"permission_timeout": "2m"}}})",
                                "quick", flags);
    CHECK(s.permission_timeout == seconds(90));
    // The config's own lists stay, and the policy's come on top.
    CHECK(s.sandbox.hidden == std::vector<std::string>{"/opt/a", "/srv/secrets", "~/.team-token"});
    CHECK(s.sandbox.denied_domains ==
          std::vector<std::string>{"evil.org", "*.internal.example.com"});
    CHECK(s.sandbox.allowed_domains.size() == 4);
    CHECK(s.sandbox.writable == std::vector<std::string>{"/srv"});
}

TEST_CASE("each key the policy enforces beats the config files, the profile and the flags") {
    struct Attempt {
        const char* key;
        const char* json;  // a config layer that goes past the policy
        ConfigLayer flag;  // the same through a flag, where there is one
        bool has_flag;
        const char* flag_name;
    };
    ConfigLayer ask, docker, timeout;
    ask.ask_sandbox_off = true;
    docker.allow_docker = true;
    timeout.permission_timeout = seconds(3600);
    const Attempt attempts[] = {
        {"ask_sandbox_off", R"({"ask_sandbox_off": true})", ask, true, "--ask-sandbox-off"},
        {"allow_docker", R"({"allow_docker": true})", docker, true, "--allow-docker"},
        {"permission_timeout", R"({"permission_timeout": "1h"})", timeout, true,
         "--permission-timeout 1h"},
        {"audit.syslog", R"({"audit": {"syslog": false}})", {}, false, ""},
        {"sandbox.allowed_domains",
         R"({"sandbox": {"allowed_domains": ["github.com"]}})",
         {},
         false,
         ""},
        {"sandbox.allowed_domains",
         R"({"sandbox": {"allowed_domains": ["*.example.com"]}})",
         {},
         false,
         ""},
        {"sandbox.allowed_domains",
         R"({"sandbox": {"allowed_domains": ["db.internal.example.com"]}})",
         {},
         false,
         ""},
        {"sandbox.allowed_domains",
         R"({"sandbox": {"allowed_domains": ["pypi.org"]}})",
         {},
         false,
         ""},
        {"sandbox.writable", R"({"sandbox": {"writable": ["/srv/secrets/db"]}})", {}, false, ""},
        {"sandbox.writable", R"({"sandbox": {"writable": ["~/.team-token"]}})", {}, false, ""},
        {"sandbox.writable", R"({"sandbox": {"writable": ["~/.bashrc"]}})", {}, false, ""},
        {"sandbox.writable", R"({"sandbox": {"writable": ["~/.local/bin"]}})", {}, false, ""},
        {"sandbox.writable", R"({"sandbox": {"writable": [".vscode"]}})", {}, false, ""},
        {"sandbox_off.always_allow",
         R"({"sandbox_off": {"always_allow": ["sudo reboot"]}})",
         {},
         false,
         ""},
    };
    const std::string quoted_policy = std::string("the machine policy ") + kPolicy;
    for (const Attempt& a : attempts) {
        INFO(a.json);
        const std::string key = std::string("\"") + a.key + "\"";
        CHECK_THAT(refusal(strict_policy(), a.json, "{}"),
                   Contains(std::string(kMachine) + ": " + key) && Contains(quoted_policy));
        CHECK_THAT(refusal(strict_policy(), "{}", a.json),
                   Contains(std::string(kUser) + ": " + key) && Contains(quoted_policy));
        const std::string with_profile = std::string(R"({"profiles": {"loose": )") + a.json + "}}";
        CHECK_THAT(refusal(strict_policy(), "{}", with_profile, "loose"),
                   Contains(std::string("profile \"loose\" in ") + kUser + ": " + key) &&
                       Contains(quoted_policy));
        CHECK_THAT(refusal(strict_policy(), with_profile, "{}", "loose"),
                   Contains(std::string("profile \"loose\" in ") + kMachine + ": " + key));
        // A profile that is not chosen is no attempt.
        CHECK(refusal(strict_policy(), "{}", with_profile) == "(no error)");
        if (a.has_flag)
            CHECK_THAT(refusal(strict_policy(), "{}", "{}", std::nullopt, a.flag),
                       Contains(std::string(a.flag_name) + " goes past " + quoted_policy));
    }
    CHECK_THAT(refusal(strict_policy(), "{}", "{}", "ops"),
               Contains("built-in profile \"ops\": \"ask_sandbox_off\" is true") &&
                   Contains(quoted_policy));
}

TEST_CASE("the refusals say what the policy allows") {
    CHECK_THAT(
        refusal(strict_policy(), "{}", R"({"sandbox": {"allowed_domains": ["github.com"]}})"),
        Contains("\"github.com\"") && Contains("*.debian.org, pypi.org:443"));
    CHECK_THAT(refusal(strict_policy(), "{}", R"({"permission_timeout": "1h30m"})"),
               Contains("is 1h30m") && Contains("at most 5m"));
    CHECK_THAT(refusal(strict_policy(), "{}", R"({"sandbox": {"writable": ["/srv/secrets"]}})"),
               Contains("hides /srv/secrets"));
}

TEST_CASE("without a policy nothing is checked or added") {
    const Settings s =
        run_with(MachinePolicy{}, R"({"allow_docker": true})", R"({"ask_sandbox_off": true})");
    CHECK(s.ask_sandbox_off);
    CHECK(s.sandbox.allow_docker);
    CHECK_FALSE(s.permission_timeout);
    CHECK_FALSE(s.sandbox.domain_bound);
}

TEST_CASE("the machine-wide config lies below the user's, key by key") {
    const auto layers =
        layers_in_force({parse_config(R"({"permission_timeout": "5m", "allow_docker": true,
            "sandbox_off": {"always_allow": ["sudo systemctl restart nginx"]},
            "profiles": {"night": {"permission_timeout": "1h", "ask_sandbox_off": true}}})",
                                      kMachine),
                         parse_config(R"({"permission_timeout": "2m",
            "profiles": {"night": {"permission_timeout": "3h"}}})",
                                      kUser)},
                        "night", {});
    REQUIRE(layers.size() == 5);
    CHECK(layers[0].source == kMachine);
    CHECK(layers[1].source == kUser);
    CHECK(layers[2].source == std::string("profile \"night\" in ") + kMachine);
    CHECK(layers[3].source == std::string("profile \"night\" in ") + kUser);
    CHECK(layers[4].from_flags);
    const Settings s = merge_settings(layers);
    CHECK(s.permission_timeout == seconds(3 * 3600));
    CHECK(s.sandbox.allow_docker);
    CHECK(s.ask_sandbox_off);
    CHECK(s.always_allow == std::vector<std::string>{"sudo systemctl restart nginx"});
    // A list in the user's config replaces the machine-wide one, as any list does.
    const Settings replaced = merge_settings(
        layers_in_force({parse_config(R"({"sandbox_off": {"always_allow": ["a"]}})", kMachine),
                         parse_config(R"({"sandbox_off": {"always_allow": ["b"]}})", kUser)},
                        std::nullopt, {}));
    CHECK(replaced.always_allow == std::vector<std::string>{"b"});
}

TEST_CASE("the administrator's files are trusted only when only root can change them") {
    TempDir dir;
    const auto folder = dir.path() / "caretz";
    std::filesystem::create_directory(folder);
    ::chmod(folder.c_str(), 0755);
    const std::string file = (folder / "policy.json").string();
    auto error_for = [&] {
        try {
            read_root_owned_file(file);
        } catch (const ConfigError& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };

    CHECK_FALSE(read_root_owned_file(file));
    std::ofstream(file) << "{}";
    ::chmod(file.c_str(), 0644);
    CHECK(read_root_owned_file(file) == "{}");

    ::chmod(file.c_str(), 0664);
    CHECK_THAT(error_for(), Contains(file) && Contains("other than root") &&
                                Contains("chown root:root " + file));
    ::chmod(file.c_str(), 0646);
    CHECK_THAT(error_for(), Contains(file) && Contains("other than root"));
    ::chmod(file.c_str(), 0644);
    REQUIRE(::chown(file.c_str(), 65534, 0) == 0);
    CHECK_THAT(error_for(), Contains(file) && Contains("other than root"));
    REQUIRE(::chown(file.c_str(), 0, 0) == 0);

    ::chmod(folder.c_str(), 0777);
    CHECK_THAT(error_for(), Contains("its folder " + folder.string()));
    ::chmod(folder.c_str(), 01777);  // sticky: others cannot replace root's file
    CHECK(error_for() == "(no error)");
    ::chmod(folder.c_str(), 0755);
    REQUIRE(::chown(folder.c_str(), 65534, 0) == 0);
    CHECK_THAT(error_for(), Contains("its folder " + folder.string()));
    REQUIRE(::chown(folder.c_str(), 0, 0) == 0);

    const std::string link = (folder / "link.json").string();
    std::filesystem::create_symlink(file, link);
    CHECK_THROWS_WITH(read_root_owned_file(link), Contains(link) && Contains("symbolic link"));
}

TEST_CASE("a policy file is read, checked and parsed, or Caretz does not start") {
    TempDir dir;
    ::chmod(dir.path().c_str(), 0755);
    const std::string file = (dir.path() / "policy.json").string();
    CHECK(load_machine_policy(file).path.empty());
    std::ofstream(file) << R"({"allow_docker": false})";
    ::chmod(file.c_str(), 0644);
    CHECK(load_machine_policy(file).forbids_docker);
    CHECK(load_machine_policy(file).path == file);
    std::ofstream(file) << R"({"allow_docker": false, "mystery": 1})";
    CHECK_THROWS_WITH(load_machine_policy(file), Contains(file) && Contains("\"mystery\""));
}

TEST_CASE("opening a path the host runs later is the user's choice unless a policy forbids it") {
    const std::string opens = R"({"sandbox": {"writable": ["~/.config/systemd/user"]}})";
    CHECK(refusal(MachinePolicy{}, "{}", opens) == "(no error)");
    CHECK(refusal(parse_machine_policy(R"({"allow_docker": false})", kPolicy), "{}", opens) ==
          "(no error)");
    CHECK_THAT(refusal(strict_policy(), "{}", opens),
               Contains("\"~/.config/systemd/user\"") &&
                   Contains("keeps what the host runs later read-only"));
    // Also the home's configuration, which no row of the table names (an entry of the home
    // whose name starts with a dot), and a path in it or in a folder of the table.
    auto writable = [](const std::string& path) {
        return R"({"sandbox": {"writable": [")" + path + R"("]}})";
    };
    for (const char* path : {"~/.docker", "~/.inputrc", "~/.docker/cli-plugins", "~/.config",
                             "~/.vim/plugin", "~/proj/.vscode/tasks.json", "/srv/app/.claude"}) {
        INFO(path);
        CHECK(refusal(MachinePolicy{}, "{}", writable(path)) == "(no error)");
        CHECK_THAT(refusal(strict_policy(), "{}", writable(path)),
                   Contains("keeps what the host runs later read-only"));
    }
    // Another writable path stays the user's to choose, the home itself too: its dot entries
    // stay read-only in it.
    for (const char* path : {"~/scratch", "~", "~/proj", "~/notes.txt", "/srv/app"})
        CHECK(refusal(strict_policy(), "{}", writable(path)) == "(no error)");
    CHECK_THAT(policy_error(R"({"sandbox": {"open_host_run": true}})"),
               Contains("\"sandbox.open_host_run\" can only be false"));
    CHECK_THAT(refusal(MachinePolicy{}, "{}", R"({"sandbox": {"open_host_run": false}})"),
               Contains("can only be set in the machine policy"));
}
