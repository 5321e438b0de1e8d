#pragma once

namespace caretz {

// The gate between bwrap's layout of a sandbox and the first thing that runs in it, for the
// private cache layer (layer_mounts.h): its overlays can only be put in once bwrap has laid
// the sandbox out, and must be in place before anything of the user's runs. Caretz passes one
// end of a socket at this descriptor to the sandbox's first program (the session supervisor,
// the per-command forwarder) when there is a layer to put in.
inline constexpr int kLayerGateFd = 8;

// The sandbox's side, first thing in its first program: hands the sandbox's mount namespace
// to Caretz over the gate and waits until Caretz has put the layer in. True at once without a
// gate; false when Caretz could not put it in or has gone (the program then says so and ends,
// running nothing).
bool wait_for_cache_layer();

}  // namespace caretz
