#include <TestOpenMP_Category.hpp>
#include <TestInputs.hpp>
