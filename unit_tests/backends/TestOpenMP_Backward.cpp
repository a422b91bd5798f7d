#include <TestOpenMP_Category.hpp>
#include <TestBackward.hpp>
