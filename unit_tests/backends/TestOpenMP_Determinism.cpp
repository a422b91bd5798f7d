#include <TestOpenMP_Category.hpp>
#include <TestDeterminism.hpp>
