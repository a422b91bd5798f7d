// softmargin_ab: no instantiation is declared extern; each side compiles the kernels it runs.
#ifndef SOFTMARGIN_ETI_HPP
#define SOFTMARGIN_ETI_HPP
#include "impl/SoftMargin_Dispatch.hpp"
#include "impl/SoftMargin_Rooms.hpp"
#endif
