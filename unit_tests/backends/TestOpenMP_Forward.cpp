#include <TestOpenMP_Category.hpp>
#include <TestForward.hpp>
