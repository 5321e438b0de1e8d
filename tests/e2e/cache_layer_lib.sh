# Helpers of the private cache layer's tests (sourced after lib.sh).

# user_sh SCRIPT: runs SCRIPT with bash as the test user in the test's home, on the host.
user_sh() { as_user /bin/bash "$TEST_HOME" bash -c "$1"; }

# in_sandbox DIR COMMAND: caretz exec as the test user in DIR, in MODE; sets OUT and RC.
in_sandbox() { caretz_as_user /bin/bash "$1" exec "${MODE[@]}" "$2"; }

# snapshot FOLDER...: every file of these folders of the test's home with its type, mode,
# size, time and content hash, for "byte-for-byte unchanged".
snapshot() {
    user_sh "cd ~ && find $* -printf '%y %m %s %T@ %p\n' 2>/dev/null | sort;
             find $* -type f -exec sha256sum {} + 2>/dev/null | sort"
}
