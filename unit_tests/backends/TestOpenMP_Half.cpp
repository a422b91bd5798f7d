#include <TestOpenMP_Category.hpp>
#include <TestHalf.hpp>
