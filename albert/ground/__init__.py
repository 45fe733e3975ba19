"""The ground floor: what every layer uses and which uses nothing of the package above it. The one exception
(`errors`), local and remote paths (`paths`), strict text reading (`textfiles`), the protocol buffer wire format
(`wire`), whole-file writes (`atomic`), TensorFlow's start-up chatter kept off the terminal (`stderr_filter`), the
run directory (`rundir`) and the command-line shell (`cli`)."""
