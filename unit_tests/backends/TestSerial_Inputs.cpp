#include <TestSerial_Category.hpp>
#include <TestInputs.hpp>
