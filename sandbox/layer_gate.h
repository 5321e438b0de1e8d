#pragma once

#include "pty/unique_fd.h"

namespace caretz {

// The gate between bwrap's layout of a sandbox and the first thing of the user's that runs in
// it, for the private cache layer (layer_mounts.h): its overlays can only be put in once bwrap
// has laid the sandbox out, and must be in place before anything of the user's runs. Caretz
// passes one end of a socket at this descriptor to the sandbox's first program (the session
// supervisor, the per-command forwarder) when there is a layer to put in.
inline constexpr int kLayerGateFd = 8;

// The sandbox's side, in its first program.
class LayerGate {
public:
    // Takes the gate, when Caretz passed one, and hands the sandbox's mount namespace over it
    // at once, so Caretz puts the layer in while the program gets ready.
    LayerGate();
    // Whether the program may start what the user's commands run in: once Caretz has put the
    // layer in (waiting for it the first time), or at once without a gate. False when Caretz
    // could not put it in or has gone; the program then ends, running nothing.
    bool passed();

private:
    UniqueFd gate_;  // until passed
    bool refused_ = false;
};

}  // namespace caretz
