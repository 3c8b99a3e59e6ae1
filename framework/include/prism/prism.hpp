#pragma once

/// The one header a Prism program includes.

#include "prism/actor.hpp"
#include "prism/api.hpp"
#include "prism/client.hpp"
#include "prism/config.hpp"
#include "prism/error.hpp"
#include "prism/future.hpp"
#include "prism/ids.hpp"
#include "prism/kv.hpp"
#include "prism/metrics.hpp"
#include "prism/object_ref.hpp"
#include "prism/state.hpp"
#include "prism/supervision.hpp"
#include "prism/supervisor.hpp"
#include "prism/task.hpp"
