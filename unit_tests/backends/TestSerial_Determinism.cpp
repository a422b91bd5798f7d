#include <TestSerial_Category.hpp>
#include <TestDeterminism.hpp>
